#include <stdio.h>
#include <string.h>

struct point { int x, y; };

int main(void) {
    struct point p = {1, 2};
    printf("%d\n", p.z);
    int n = strlen("abc")
    char *s = "x";
    p.x = "text";
    p.y = count;
    struct circle c;
    return q + n;
}
