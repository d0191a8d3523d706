// Hidden Catch2 tests for cpp_word_count, built with wordcount.cpp under ASan and UBSan.
#define CATCH_CONFIG_ENABLE_PAIR_STRINGMAKER  // a failed check shows the pairs, not {?}
#include <catch2/catch_test_macros.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "wordcount.hpp"

using Counts = std::map<std::string, int>;
using Top = std::vector<std::pair<std::string, int>>;

TEST_CASE("words are counted in lower case") {
    CHECK(count_words("The cat saw the other cat.") == Counts{{"cat", 2}, {"other", 1}, {"saw", 1}, {"the", 2}});
    CHECK(count_words("Hello HELLO hello") == Counts{{"hello", 3}});
}

TEST_CASE("anything but letters and digits separates words") {
    CHECK(count_words("don't stop") == Counts{{"don", 1}, {"stop", 1}, {"t", 1}});
    CHECK(count_words("a,b;c\td\ne--f") == Counts{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}, {"f", 1}});
    CHECK(count_words("room 101 and room101") == Counts{{"101", 1}, {"and", 1}, {"room", 1}, {"room101", 1}});
    CHECK(count_words("  edge  ") == Counts{{"edge", 1}});
    CHECK(count_words("end") == Counts{{"end", 1}});
}

TEST_CASE("a text without words gives an empty map") {
    CHECK(count_words("").empty());
    CHECK(count_words("  ... !!! \n").empty());
}

TEST_CASE("bytes outside ASCII separate words and do not crash") {
    std::string text = "caf\xc3\xa9 na\xc3\xafve caf\xc3\xa9";
    CHECK(count_words(text) == Counts{{"caf", 2}, {"na", 1}, {"ve", 1}});
}

TEST_CASE("top_words orders by count, then alphabetically") {
    Counts counts{{"pear", 2}, {"apple", 5}, {"fig", 2}, {"kiwi", 1}, {"banana", 5}};
    CHECK(top_words(counts, 3) == Top{{"apple", 5}, {"banana", 5}, {"fig", 2}});
    CHECK(top_words(counts, 1) == Top{{"apple", 5}});
    CHECK(top_words(counts, 10) == Top{{"apple", 5}, {"banana", 5}, {"fig", 2}, {"pear", 2}, {"kiwi", 1}});
    CHECK(top_words(counts, 0).empty());
    CHECK(top_words({}, 3).empty());
}

TEST_CASE("the two together on a paragraph") {
    std::string text =
        "It was the best of times, it was the worst of times, it was the age of wisdom, "
        "it was the age of foolishness.";
    Counts counts = count_words(text);
    CHECK(counts.at("it") == 4);
    CHECK(counts.at("times") == 2);
    CHECK(counts.size() == 10);
    CHECK(top_words(counts, 4) == Top{{"it", 4}, {"of", 4}, {"the", 4}, {"was", 4}});
}
