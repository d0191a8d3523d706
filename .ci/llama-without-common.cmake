# Included by CMake right after llama-cpp-python's project() (CMAKE_PROJECT_llama_cpp_INCLUDE, set in the Makefile).
# llama-cpp-python 0.3.36 forces LLAMA_BUILD_COMMON on with a cache entry; a normal variable of the same name shadows
# it (policy CMP0126 is NEW under its cmake_minimum_required 3.21, and CMP0077 makes llama.cpp's option() keep it), so
# llama.cpp's `common` library and the cpp-httplib it compiles are left out. llama_cpp loads libllama and libggml
# only: nothing of the Python package uses libllama-common. The compile: 83 steps instead of about 140.
set(LLAMA_BUILD_COMMON OFF)
