#include <stdio.h>
#include <stdlib.h>

int *make(int n) {
    int *a = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) a[i] = i;
    return a;
}

int main(void) {
    int *a = make(10);
    printf("last = %d\n", a[9]);
    return 0;
}
