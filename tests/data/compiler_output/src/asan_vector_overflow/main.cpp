#include <iostream>
#include <vector>

int total(const std::vector<int> &v) {
    int s = 0;
    for (size_t i = 0; i <= v.size(); i++) s += v[i];
    return s;
}

int main() {
    std::vector<int> v{1, 2, 3, 4};
    std::cout << "summing " << v.size() << " values" << std::endl;
    std::cout << total(v) << std::endl;
    return 0;
}
