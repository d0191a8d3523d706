#include <stdio.h>

int main(int argc, char **argv) {
    int a[3] = {1, 2, 3};
    int i = argc + 4;
    printf("reading a[%d]\n", i);
    fflush(stdout);
    printf("%d\n", a[i]);
    return 0;
}
