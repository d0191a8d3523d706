import configparser
import json
import re


def convert(value):
    if re.fullmatch(r"[+-]?\d+", value):
        return int(value)
    if re.fullmatch(r"[+-]?\d*\.\d+", value):
        return float(value)
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


parser = configparser.ConfigParser(interpolation=None, comment_prefixes=(";", "#"))
parser.read("settings.ini")
settings = {section: {key: convert(value) for key, value in parser[section].items()}
            for section in parser.sections()}

with open("settings.json", "w") as f:
    json.dump(settings, f, indent=2)
print(f"sections: {len(settings)}")
print(f"keys: {sum(len(values) for values in settings.values())}")
