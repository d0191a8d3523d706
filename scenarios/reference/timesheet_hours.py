import csv
from collections import defaultdict
from datetime import datetime, timedelta

minutes = defaultdict(int)
with open("timesheet.csv", newline="") as f:
    for row in csv.DictReader(f):
        start = datetime.strptime(f"{row['date']} {row['clock_in']}", "%Y-%m-%d %H:%M")
        end = datetime.strptime(f"{row['date']} {row['clock_out']}", "%Y-%m-%d %H:%M")
        if end < start:
            end += timedelta(days=1)
        worked = end - start - timedelta(minutes=int(row["break_minutes"]))
        minutes[row["employee"]] += int(worked.total_seconds() // 60)

with open("hours.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["employee", "hours", "overtime"])
    print("employee,hours,overtime")
    for employee in sorted(minutes):
        hours = minutes[employee] / 60
        overtime = max(0.0, hours - 40)
        writer.writerow([employee, f"{hours:.2f}", f"{overtime:.2f}"])
        print(f"{employee},{hours:.2f},{overtime:.2f}")
