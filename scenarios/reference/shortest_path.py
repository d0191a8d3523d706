import heapq

roads = "A-B 7, A-C 9, A-F 14, B-C 10, B-D 15, C-D 11, C-F 2, D-E 6, E-F 9, E-G 4, F-G 12, D-G 13"
graph = {}
for item in roads.split(","):
    edge, km = item.split()
    a, b = edge.split("-")
    graph.setdefault(a, []).append((b, int(km)))
    graph.setdefault(b, []).append((a, int(km)))

dist = {"A": 0}
prev = {}
queue = [(0, "A")]
done = set()
while queue:
    d, node = heapq.heappop(queue)
    if node in done:
        continue
    done.add(node)
    for nxt, km in graph[node]:
        if d + km < dist.get(nxt, float("inf")):
            dist[nxt] = d + km
            prev[nxt] = node
            heapq.heappush(queue, (d + km, nxt))

route = ["G"]
while route[-1] != "A":
    route.append(prev[route[-1]])
print(f"Shortest distance: {dist['G']} km")
print(" -> ".join(reversed(route)))
