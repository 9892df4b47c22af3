module libegpu.dev/egpu/prom

go 1.19

require (
	github.com/prometheus/client_golang v1.14.0
	github.com/prometheus/client_model v0.3.0
	github.com/prometheus/common v0.39.0
	libegpu.dev/egpu v0.0.0
)

replace libegpu.dev/egpu => ../
