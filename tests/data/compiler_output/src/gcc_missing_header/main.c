#include <stdio.h>
#include "util.h"

int main(void) {
    printf("%d\n", util_answer());
    return 0;
}
