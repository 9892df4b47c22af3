module libegpu.dev/egpu

go 1.19
