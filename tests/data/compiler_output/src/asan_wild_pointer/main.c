#include <stdio.h>
#include <stdint.h>

int read_at(uintptr_t addr) {
    int *p = (int *)addr;
    return *p;
}

int main(void) {
    printf("reading\n");
    fflush(stdout);
    printf("%d\n", read_at(0x10));
    return 0;
}
