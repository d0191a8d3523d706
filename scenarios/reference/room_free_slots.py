def minutes(hhmm):
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def hhmm(total):
    return f"{total // 60:02d}:{total % 60:02d}"


bookings = []
with open("bookings.txt") as f:
    for line in f:
        if line.strip():
            span = line.split()[0]
            start, end = span.split("-")
            bookings.append((minutes(start), minutes(end)))

busy = []
for start, end in sorted(bookings):
    if busy and start <= busy[-1][1]:
        busy[-1][1] = max(busy[-1][1], end)
    else:
        busy.append([start, end])

for start, end in busy:
    print(f"{hhmm(start)}-{hhmm(end)}")

cursor, day_end = minutes("09:00"), minutes("18:00")
for start, end in busy + [[day_end, day_end]]:
    start = min(max(start, cursor), day_end)
    if start - cursor >= 30:
        print(f"free {hhmm(cursor)}-{hhmm(start)} ({start - cursor} min)")
    cursor = max(cursor, min(end, day_end))
