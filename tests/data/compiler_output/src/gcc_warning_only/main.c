#include <stdio.h>

int main(void) {
    int unused;
    unsigned n = 3;
    for (int i = 0; i < n; i++)
        printf("line %d\n", i);
    return 0;
}
