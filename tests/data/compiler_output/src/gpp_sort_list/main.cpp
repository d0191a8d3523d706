#include <algorithm>
#include <iostream>
#include <list>

int main() {
    std::list<int> xs{3, 1, 2};
    std::sort(xs.begin(), xs.end());
    for (int x : xs) std::cout << x << "\n";
    return 0;
}
