#include <stdio.h>

int sum(const int *a, int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return total;
}

int main(void) {
    int unused;
    int a[3] = {1, 2, 3};
    printf("%d\n", sum(a, 3));
    return 0;
}
