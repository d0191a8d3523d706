#include <stdio.h>

long depth(long n) {
    char buf[64];
    buf[n % 64] = (char)n;
    return depth(n + 1) + buf[0];
}

int main(void) {
    printf("recursing\n");
    fflush(stdout);
    printf("%ld\n", depth(0));
    return 0;
}
