import re
from itertools import groupby


def encode(text):
    return "".join(f"{len(list(group))}{char}" for char, group in groupby(text))


def decode(code):
    return "".join(char * int(count) for count, char in re.findall(r"(\d+)(\D)", code))


strings = ["WWWWWWWWWWWWBWWWWWWWWWWWWBBBWWWWWWWWWWWWWWWWWWWWWWWWBWWWWWWWWWWWWWW", "aaAAAbccccccccccccd"]
for s in strings:
    print(f"{s} -> {encode(s)}")
for code in ["3A10B2C", "1x11y1z"]:
    print(f"{code} -> {decode(code)}")
if all(decode(encode(s)) == s for s in strings):
    print("round trip ok")
