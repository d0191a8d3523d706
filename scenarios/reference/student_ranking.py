import csv

students = [("Alice", 88, 92, 79), ("Bob", 75, 68, 81), ("Chen", 93, 85, 90), ("Dana", 67, 74, 72),
            ("Eve", 81, 95, 88)]
with open("students.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["name", "math", "physics", "chemistry"])
    writer.writerows(students)

with open("students.csv", newline="") as f:
    rows = list(csv.DictReader(f))
ranking = []
for r in rows:
    average = (int(r["math"]) + int(r["physics"]) + int(r["chemistry"])) / 3
    ranking.append((r["name"], round(average, 1)))
ranking.sort(key=lambda item: item[1], reverse=True)

with open("ranking.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["name", "average"])
    writer.writerows(ranking)
for name, average in ranking:
    print(f"{name}: {average}")
