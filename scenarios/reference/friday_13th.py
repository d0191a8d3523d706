from datetime import date

fridays = [date(y, m, 13) for y in range(2000, 2031) for m in range(1, 13) if date(y, m, 13).weekday() == 4]
print(len(fridays))
for d in fridays[:3]:
    print(d.isoformat())
