// Hidden Catch2 tests for cpp_bits, built under ASan and UBSan (an out-of-range shift aborts the run). The
// arguments go through a volatile, so each call runs at run time, under the sanitizers, even when constexpr.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>

#include "bits.hpp"

namespace {
template <typename T>
T at_run_time(T value) {
    volatile T v = value;
    return v;
}
}  // namespace

using u32 = std::uint32_t;
#define RT(x) at_run_time<u32>(x)

TEST_CASE("popcount") {
    CHECK(bits::popcount(RT(0)) == 0);
    CHECK(bits::popcount(RT(1)) == 1);
    CHECK(bits::popcount(RT(0xF0)) == 4);
    CHECK(bits::popcount(RT(0x80000001u)) == 2);
    CHECK(bits::popcount(RT(0xFFFFFFFFu)) == 32);
    CHECK(bits::popcount(RT(0xAAAAAAAAu)) == 16);
}

TEST_CASE("is_power_of_two") {
    CHECK_FALSE(bits::is_power_of_two(RT(0)));
    CHECK(bits::is_power_of_two(RT(1)));
    CHECK(bits::is_power_of_two(RT(2)));
    CHECK_FALSE(bits::is_power_of_two(RT(3)));
    CHECK(bits::is_power_of_two(RT(1024)));
    CHECK_FALSE(bits::is_power_of_two(RT(1023)));
    CHECK(bits::is_power_of_two(RT(0x80000000u)));
    CHECK_FALSE(bits::is_power_of_two(RT(0xFFFFFFFFu)));
}

TEST_CASE("next_power_of_two") {
    CHECK(bits::next_power_of_two(RT(0)) == 1u);
    CHECK(bits::next_power_of_two(RT(1)) == 1u);
    CHECK(bits::next_power_of_two(RT(2)) == 2u);
    CHECK(bits::next_power_of_two(RT(3)) == 4u);
    CHECK(bits::next_power_of_two(RT(17)) == 32u);
    CHECK(bits::next_power_of_two(RT(1024)) == 1024u);
    CHECK(bits::next_power_of_two(RT(1025)) == 2048u);
    CHECK(bits::next_power_of_two(RT(0x40000001u)) == 0x80000000u);
    CHECK(bits::next_power_of_two(RT(0x80000000u)) == 0x80000000u);
    CHECK(bits::next_power_of_two(RT(0x80000001u)) == 0u);
    CHECK(bits::next_power_of_two(RT(0xFFFFFFFFu)) == 0u);
}

TEST_CASE("reverse_bits") {
    CHECK(bits::reverse_bits(RT(0)) == 0u);
    CHECK(bits::reverse_bits(RT(1)) == 0x80000000u);
    CHECK(bits::reverse_bits(RT(0x80000000u)) == 1u);
    CHECK(bits::reverse_bits(RT(0xF0)) == 0x0F000000u);
    CHECK(bits::reverse_bits(RT(0x12345678u)) == 0x1E6A2C48u);
    CHECK(bits::reverse_bits(RT(0xFFFFFFFFu)) == 0xFFFFFFFFu);
    CHECK(bits::reverse_bits(bits::reverse_bits(RT(0xDEADBEEFu))) == 0xDEADBEEFu);
}

TEST_CASE("rotate_left") {
    CHECK(bits::rotate_left(RT(1), at_run_time(1u)) == 2u);
    CHECK(bits::rotate_left(RT(0x80000000u), at_run_time(1u)) == 1u);
    CHECK(bits::rotate_left(RT(0x12345678u), at_run_time(8u)) == 0x34567812u);
    CHECK(bits::rotate_left(RT(0x12345678u), at_run_time(0u)) == 0x12345678u);
    CHECK(bits::rotate_left(RT(0x12345678u), at_run_time(32u)) == 0x12345678u);
    CHECK(bits::rotate_left(RT(0x12345678u), at_run_time(36u)) == 0x23456781u);
    CHECK(bits::rotate_left(RT(0x12345678u), at_run_time(100u)) == 0x23456781u);
    CHECK(bits::rotate_left(RT(0x12345678u), at_run_time(31u)) == 0x091A2B3Cu);
}

TEST_CASE("lowest_set_bit") {
    CHECK(bits::lowest_set_bit(RT(0)) == -1);
    CHECK(bits::lowest_set_bit(RT(1)) == 0);
    CHECK(bits::lowest_set_bit(RT(12)) == 2);
    CHECK(bits::lowest_set_bit(RT(0x80000000u)) == 31);
    CHECK(bits::lowest_set_bit(RT(0xFFFFFFFFu)) == 0);
    CHECK(bits::lowest_set_bit(RT(0x00010000u)) == 16);
}

TEST_CASE("extract_bits") {
    CHECK(bits::extract_bits(RT(0xABCD), at_run_time(4u), at_run_time(8u)) == 0xBCu);
    CHECK(bits::extract_bits(RT(0xABCD), at_run_time(0u), at_run_time(4u)) == 0xDu);
    CHECK(bits::extract_bits(RT(0xABCD), at_run_time(12u), at_run_time(4u)) == 0xAu);
    CHECK(bits::extract_bits(RT(0xDEADBEEFu), at_run_time(0u), at_run_time(32u)) == 0xDEADBEEFu);
    CHECK(bits::extract_bits(RT(0xDEADBEEFu), at_run_time(16u), at_run_time(16u)) == 0xDEADu);
    CHECK(bits::extract_bits(RT(0xDEADBEEFu), at_run_time(31u), at_run_time(1u)) == 1u);
    CHECK(bits::extract_bits(RT(0xDEADBEEFu), at_run_time(8u), at_run_time(0u)) == 0u);
    CHECK(bits::extract_bits(RT(0xDEADBEEFu), at_run_time(32u), at_run_time(0u)) == 0u);
}
