module wrap

go 1.22
