#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *make_name(void) {
    char *s = malloc(16);
    strcpy(s, "codeduet");
    return s;
}

int main(void) {
    char *name = make_name();
    free(name);
    printf("name: %s\n", name);
    return 0;
}
