// Hidden Catch2 tests for cpp_text_file, built under ASan and UBSan (a double fclose is a double free); a file
// left open is seen in /proc/self/fd.
#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "text_file.hpp"

static_assert(!std::is_copy_constructible_v<TextFile>, "TextFile must not be copyable");
static_assert(!std::is_copy_assignable_v<TextFile>, "TextFile must not be copy-assignable");
static_assert(std::is_nothrow_move_constructible_v<TextFile>, "TextFile's move constructor must be noexcept");
static_assert(std::is_nothrow_move_assignable_v<TextFile>, "TextFile's move assignment must be noexcept");

namespace {

std::string path_for(const std::string& name) {
    return "/tmp/codeduet_text_file_" + name + ".txt";
}

// What is on disk, read with the standard library (not through TextFile).
std::string on_disk(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
}

void put(const std::string& path, const std::string& content) {
    std::ofstream(path, std::ios::binary) << content;
}

// How many file descriptors the process has open now.
long open_fds() {
    long n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) n++;
    return n;
}

}  // namespace

TEST_CASE("lines written are there once the object is gone") {
    const std::string path = path_for("write");
    {
        TextFile out(path, "w");
        CHECK(out.is_open());
        out.write_line("first");
        out.write_line("");
        out.write_line("third line");
    }  // the destructor closes (and so flushes) the file
    CHECK(on_disk(path) == "first\n\nthird line\n");
    std::remove(path.c_str());
}

TEST_CASE("read_lines returns the remaining lines without their newlines") {
    const std::string path = path_for("read");
    put(path, "alpha\nbeta\n\ngamma");
    TextFile in(path, "r");
    CHECK(in.read_lines() == std::vector<std::string>{"alpha", "beta", "", "gamma"});
    CHECK(in.read_lines().empty());  // nothing is left
    std::remove(path.c_str());
}

TEST_CASE("long lines are read whole") {
    const std::string path = path_for("long");
    const std::string long_line(10000, 'x');
    put(path, "short\n" + long_line + "\nend\n");
    TextFile in(path, "r");
    CHECK(in.read_lines() == std::vector<std::string>{"short", long_line, "end"});
    std::remove(path.c_str());
}

TEST_CASE("append mode adds to the end") {
    const std::string path = path_for("append");
    put(path, "one\n");
    {
        TextFile out(path, "a");
        out.write_line("two");
    }
    CHECK(on_disk(path) == "one\ntwo\n");
    std::remove(path.c_str());
}

TEST_CASE("a file that cannot be opened throws std::runtime_error") {
    const long before = open_fds();
    CHECK_THROWS_AS(TextFile("/tmp/codeduet_no_such_dir/x.txt", "r"), std::runtime_error);
    CHECK_THROWS_AS(TextFile("/tmp/codeduet_no_such_dir/x.txt", "w"), std::runtime_error);
    CHECK(open_fds() == before);
}

TEST_CASE("a file is closed when its object goes out of scope, however it goes") {
    const std::string path = path_for("scope");
    const long before = open_fds();
    {
        TextFile out(path, "w");
        CHECK(open_fds() == before + 1);
    }
    CHECK(open_fds() == before);
    try {
        TextFile in(path, "r");
        throw std::runtime_error("leaving by an exception");
    } catch (const std::runtime_error&) {
    }
    CHECK(open_fds() == before);
    {
        TextFile moved_from(path, "r");
        TextFile keeper(std::move(moved_from));
        CHECK(open_fds() == before + 1);
    }
    CHECK(open_fds() == before);
    std::remove(path.c_str());
}

TEST_CASE("close is idempotent and a closed file refuses reads and writes") {
    const std::string path = path_for("close");
    TextFile out(path, "w");
    out.write_line("kept");
    out.close();
    CHECK_FALSE(out.is_open());
    CHECK(on_disk(path) == "kept\n");  // closing flushed it
    out.close();
    CHECK_THROWS_AS(out.write_line("lost"), std::logic_error);
    CHECK_THROWS_AS(out.read_lines(), std::logic_error);
    std::remove(path.c_str());
}

TEST_CASE("moving hands the file over and leaves the source closed") {
    const std::string path = path_for("move");
    TextFile first(path, "w");
    first.write_line("before the move");
    TextFile second(std::move(first));
    CHECK_FALSE(first.is_open());
    CHECK(second.is_open());
    CHECK_THROWS_AS(first.write_line("nope"), std::logic_error);
    second.write_line("after the move");
    second.close();
    CHECK(on_disk(path) == "before the move\nafter the move\n");
    std::remove(path.c_str());
}

TEST_CASE("move assignment closes the file it had, then takes the other's") {
    const std::string path_a = path_for("assign_a");
    const std::string path_b = path_for("assign_b");
    TextFile a(path_a, "w");
    a.write_line("a's line");
    TextFile b(path_b, "w");
    b.write_line("b's line");
    a = std::move(b);
    CHECK(on_disk(path_a) == "a's line\n");  // a's own file was closed, so flushed
    CHECK(a.is_open());
    CHECK_FALSE(b.is_open());
    a.write_line("more for b");
    a.close();
    CHECK(on_disk(path_b) == "b's line\nmore for b\n");
    std::remove(path_a.c_str());
    std::remove(path_b.c_str());
}

TEST_CASE("files in a vector are moved as it grows, and all closed at the end") {
    const long before = open_fds();
    std::vector<TextFile> files;
    for (int i = 0; i < 20; i++) {
        files.emplace_back(path_for("many_" + std::to_string(i)), "w");
        files.back().write_line(std::to_string(i));
    }
    CHECK(open_fds() == before + 20);
    files.clear();  // every file closed once (a double fclose is reported by ASan)
    CHECK(open_fds() == before);
    for (int i = 0; i < 20; i++) {
        const std::string path = path_for("many_" + std::to_string(i));
        CHECK(on_disk(path) == std::to_string(i) + "\n");
        std::remove(path.c_str());
    }
}
