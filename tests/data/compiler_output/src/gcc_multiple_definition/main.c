#include <stdio.h>

int counter = 0;
int bump(void);

int main(void) {
    printf("%d\n", bump());
    return 0;
}
