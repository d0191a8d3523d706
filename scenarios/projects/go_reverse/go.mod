module reverse

go 1.22
