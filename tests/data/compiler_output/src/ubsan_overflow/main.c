#include <stdio.h>

int factorial(int n) {
    int r = 1;
    for (int i = 2; i <= n; i++) r *= i;
    return r;
}

int main(int argc, char **argv) {
    for (int n = 10; n <= 14 + argc; n++) {
        printf("%d! = %d\n", n, factorial(n));
        fflush(stdout);
    }
    return 0;
}
