#include <stdio.h>

/* Prints the average of the temperatures measured this week. */
int main(void) {
    int temps[7] = {21, 23, 19, 24, 25, 22, 18};
    int sum = 0;
    for (int i = 0; i <= 7; i++) {
        sum += temps[i];
    }
    printf("average=%.2f\n", sum / 7);
    return 0;
}
