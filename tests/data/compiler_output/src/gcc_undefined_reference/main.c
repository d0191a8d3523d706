#include <stdio.h>

int helper(int x);

int main(void) {
    printf("%d\n", helper(2));
    return 0;
}
