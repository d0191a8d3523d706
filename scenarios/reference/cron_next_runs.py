from datetime import datetime, timedelta


def runs(start, end):
    """Every run time t with start < t <= end."""
    t = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while t <= end:
        if t.minute % 15 == 0 and 9 <= t.hour <= 17 and t.weekday() < 5:
            yield t
        t += timedelta(minutes=1)


after = datetime(2024, 3, 8, 16, 52)
upcoming = []
for t in runs(after, after + timedelta(days=7)):
    upcoming.append(t)
    if len(upcoming) == 6:
        break
for t in upcoming:
    print(t.strftime("%Y-%m-%d %H:%M"))

march = list(runs(datetime(2024, 2, 29, 23, 59), datetime(2024, 3, 31, 23, 59)))
print(f"runs in March 2024: {len(march)}")
