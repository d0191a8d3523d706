// Hidden Catch2 tests for cpp_ring_buffer, built under ASan and UBSan.
#define CATCH_CONFIG_ENABLE_OPTIONAL_STRINGMAKER  // a failed check shows the optional's value
#include <catch2/catch_test_macros.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ring_buffer.hpp"

TEST_CASE("a new buffer is empty and a zero capacity is refused") {
    RingBuffer<int> rb(3);
    CHECK(rb.size() == 0);
    CHECK(rb.capacity() == 3);
    CHECK(rb.empty());
    CHECK_FALSE(rb.full());
    CHECK(rb.to_vector().empty());
    CHECK_FALSE(rb.pop().has_value());
    CHECK_THROWS_AS(rb.front(), std::out_of_range);
    CHECK_THROWS_AS(RingBuffer<int>(0), std::invalid_argument);
}

TEST_CASE("items come out oldest first") {
    RingBuffer<int> rb(4);
    rb.push(1);
    rb.push(2);
    rb.push(3);
    CHECK(rb.size() == 3);
    CHECK(rb.front() == 1);
    CHECK(rb.to_vector() == std::vector<int>{1, 2, 3});
    CHECK(rb.pop() == std::optional<int>(1));
    CHECK(rb.pop() == std::optional<int>(2));
    CHECK(rb.size() == 1);
    CHECK(rb.front() == 3);
}

TEST_CASE("a full buffer drops its oldest item") {
    RingBuffer<int> rb(3);
    for (int i = 1; i <= 3; i++) rb.push(i);
    CHECK(rb.full());
    rb.push(4);
    CHECK(rb.size() == 3);
    CHECK(rb.full());
    CHECK(rb.front() == 2);
    CHECK(rb.to_vector() == std::vector<int>{2, 3, 4});
    for (int i = 5; i <= 10; i++) rb.push(i);
    CHECK(rb.to_vector() == std::vector<int>{8, 9, 10});
}

TEST_CASE("pushes and pops wrap around the array many times") {
    RingBuffer<int> rb(5);
    std::vector<int> popped;
    int next = 0;
    for (int round = 0; round < 50; round++) {
        rb.push(next++);
        rb.push(next++);
        auto item = rb.pop();
        REQUIRE(item.has_value());
        popped.push_back(*item);
    }
    // from round 4 on, each round drops one item to make room and pops one: 4 items are left
    CHECK(rb.size() == 4);
    CHECK(rb.to_vector() == std::vector<int>{96, 97, 98, 99});
    while (auto item = rb.pop()) popped.push_back(*item);
    CHECK(rb.empty());
    CHECK(popped.front() == 0);
    CHECK(popped.back() == 99);
    CHECK(popped.size() == 54);
}

TEST_CASE("a capacity of one keeps the newest item") {
    RingBuffer<int> rb(1);
    rb.push(7);
    rb.push(8);
    CHECK(rb.size() == 1);
    CHECK(rb.front() == 8);
    CHECK(rb.pop() == std::optional<int>(8));
    CHECK(rb.empty());
}

TEST_CASE("clear empties the buffer and keeps its capacity") {
    RingBuffer<int> rb(3);
    for (int i = 0; i < 5; i++) rb.push(i);
    rb.clear();
    CHECK(rb.empty());
    CHECK(rb.capacity() == 3);
    CHECK_FALSE(rb.pop().has_value());
    rb.push(42);
    CHECK(rb.to_vector() == std::vector<int>{42});
}

TEST_CASE("strings are copied in and out") {
    RingBuffer<std::string> rb(2);
    std::string line = "first log line, long enough to live on the heap";
    rb.push(line);
    line[0] = 'F';
    rb.push("second log line, also long enough to live on the heap");
    rb.push("third log line, the first one is gone by now, dropped");
    CHECK(rb.front() == "second log line, also long enough to live on the heap");
    std::optional<std::string> out = rb.pop();
    REQUIRE(out.has_value());
    CHECK(*out == "second log line, also long enough to live on the heap");
    CHECK(rb.to_vector() == std::vector<std::string>{"third log line, the first one is gone by now, dropped"});
}

TEST_CASE("a const buffer can be read") {
    RingBuffer<int> rb(2);
    rb.push(5);
    const RingBuffer<int>& view = rb;
    CHECK(view.front() == 5);
    CHECK(view.size() == 1);
    CHECK(view.capacity() == 2);
    CHECK_FALSE(view.empty());
    CHECK_FALSE(view.full());
    CHECK(view.to_vector() == std::vector<int>{5});
}
