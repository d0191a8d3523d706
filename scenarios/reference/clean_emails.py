import re

PATTERN = re.compile(r"(?<![\w.+@-])[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?![\w@-])")

with open("contacts.txt") as f:
    text = f.read()

emails = sorted({m.group(0).lower() for m in PATTERN.finditer(text)})
with open("emails.txt", "w") as f:
    for email in emails:
        f.write(email + "\n")
print(f"Found {len(emails)} e-mail addresses")
