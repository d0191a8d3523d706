#include <stdio.h>
#include <stdlib.h>

void fill(int *a, int n) {
    for (int i = 0; i <= n; i++) {
        a[i] = i * i;
        printf("a[%d] = %d\n", i, a[i]);
        fflush(stdout);
    }
}

int main(void) {
    printf("filling 12 squares\n");
    int *a = malloc(12 * sizeof(int));
    fill(a, 12);
    free(a);
    return 0;
}
