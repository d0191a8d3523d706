// Hidden Catch2 tests for cpp_matrix, built under ASan and UBSan. Every value is a small integer, so the products
// are exact in double and compared with ==.
#include <catch2/catch_test_macros.hpp>

#include <sstream>
#include <stdexcept>
#include <string>

#include "matrix.hpp"

// A failed check shows the matrices row by row, as {{1, 2}, {3, 4}} (2x2), not {?}.
template <>
struct Catch::StringMaker<Matrix> {
    static std::string convert(const Matrix& m) {
        std::ostringstream out;
        out << "{";
        for (std::size_t r = 0; r < m.rows(); r++) {
            out << (r ? ", {" : "{");
            for (std::size_t c = 0; c < m.cols(); c++) out << (c ? ", " : "") << m(r, c);
            out << "}";
        }
        out << "} (" << m.rows() << "x" << m.cols() << ")";
        return out.str();
    }
};

TEST_CASE("a new matrix has its shape and zeros") {
    Matrix m(2, 3);
    CHECK(m.rows() == 2);
    CHECK(m.cols() == 3);
    for (std::size_t r = 0; r < 2; r++)
        for (std::size_t c = 0; c < 3; c++) CHECK(m(r, c) == 0.0);
}

TEST_CASE("elements are read and written by row and column") {
    Matrix m{{1, 2, 3}, {4, 5, 6}};
    CHECK(m.rows() == 2);
    CHECK(m.cols() == 3);
    CHECK(m(0, 2) == 3.0);
    CHECK(m(1, 0) == 4.0);
    m(1, 2) = 60;
    CHECK(m(1, 2) == 60.0);
    const Matrix& view = m;
    CHECK(view(1, 1) == 5.0);
    CHECK(view.at(1, 2) == 60.0);
}

TEST_CASE("at checks its bounds") {
    Matrix m{{1, 2, 3}, {4, 5, 6}};
    CHECK_THROWS_AS(m.at(2, 0), std::out_of_range);
    CHECK_THROWS_AS(m.at(0, 3), std::out_of_range);
    CHECK(m.at(1, 2) == 6.0);
}

TEST_CASE("rows of different lengths are refused") {
    CHECK_THROWS_AS((Matrix{{1, 2}, {3}}), std::invalid_argument);
}

TEST_CASE("a 2x3 times a 3x2 is a 2x2") {
    Matrix a{{1, 2, 3}, {4, 5, 6}};
    Matrix b{{7, 8}, {9, 10}, {11, 12}};
    CHECK(a * b == Matrix{{58, 64}, {139, 154}});
    CHECK(b * a == Matrix{{39, 54, 69}, {49, 68, 87}, {59, 82, 105}});
}

TEST_CASE("a row times a column and a column times a row") {
    Matrix row{{1, 2, 3}};
    Matrix column{{4}, {5}, {6}};
    CHECK(row * column == Matrix{{32}});
    Matrix outer = column * row;
    CHECK(outer.rows() == 3);
    CHECK(outer.cols() == 3);
    CHECK(outer == Matrix{{4, 8, 12}, {5, 10, 15}, {6, 12, 18}});
}

TEST_CASE("the identity changes nothing") {
    Matrix m{{2, -1}, {0, 3}, {5, 7}};
    CHECK(Matrix::identity(3) * m == m);
    CHECK(m * Matrix::identity(2) == m);
    CHECK(Matrix::identity(2) == Matrix{{1, 0}, {0, 1}});
}

TEST_CASE("shapes that do not fit are refused") {
    Matrix a(2, 3);
    Matrix b(2, 3);
    CHECK_THROWS_AS(a * b, std::invalid_argument);
    CHECK_THROWS_AS(Matrix(1, 4) * Matrix(3, 1), std::invalid_argument);
}

TEST_CASE("transpose swaps rows and columns") {
    Matrix m{{1, 2, 3}, {4, 5, 6}};
    Matrix t = m.transpose();
    CHECK(t.rows() == 3);
    CHECK(t.cols() == 2);
    CHECK(t == Matrix{{1, 4}, {2, 5}, {3, 6}});
    CHECK(t.transpose() == m);
    Matrix a{{1, 2}, {3, 4}};
    Matrix b{{0, 1}, {5, -2}};
    CHECK((a * b).transpose() == b.transpose() * a.transpose());
}

TEST_CASE("equality needs the same shape") {
    CHECK_FALSE(Matrix(2, 3) == Matrix(3, 2));
    CHECK_FALSE(Matrix(1, 6) == Matrix(2, 3));
    CHECK(Matrix(2, 2) == Matrix{{0, 0}, {0, 0}});
    CHECK_FALSE((Matrix{{1, 2}}) == (Matrix{{1, 3}}));
}
