import json
import re

releases = []
current = category = None
with open("CHANGELOG.md") as f:
    for line in f:
        heading = re.match(r"##\s+\[([^\]]+)\](?:\s*-\s*(\d{4}-\d{2}-\d{2}))?", line)
        if heading:
            category = None
            if heading.group(1).lower() == "unreleased":
                current = None
            else:
                current = {"version": heading.group(1), "date": heading.group(2), "changes": {}}
                releases.append(current)
            continue
        section = re.match(r"###\s+(\w+)", line)
        if section:
            category = section.group(1)
            continue
        if current is not None and category and line.startswith("- "):
            current["changes"][category] = current["changes"].get(category, 0) + 1

with open("changelog.json", "w") as f:
    json.dump(releases, f, indent=2)

best = max(releases, key=lambda r: r["changes"].get("Fixed", 0))
print(f"most fixes: {best['version']} ({best['changes'].get('Fixed', 0)})")
