#include <stdio.h>

int main(void) {
    int *p = NULL;
    printf("before\n");
    fflush(stdout);
    *p = 1;
    return 0;
}
