module libegpu.dev/kernelstat

go 1.19

require libegpu.dev/egpu v0.0.0

replace libegpu.dev/egpu => ../../bindings/go
