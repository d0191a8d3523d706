#include <iostream>
#include <vector>

int main() {
    std::vector<int> v{3, 1, 2};
    std::cout << v << std::endl;
    return 0;
}
