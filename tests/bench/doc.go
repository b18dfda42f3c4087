// Package bench measures what the gateway adds to a request: the same chat
// request sent straight to the fake upstream (BenchmarkDirect) and through an
// in-process gateway (BenchmarkGateway), JSON and SSE, serially and in
// parallel. The figures are printed, never asserted: run
//
//	go test -run='^$' -bench=. -benchtime=2000x ./tests/bench/
//
// and compare the two benchmarks' µs/op and cpu-µs/op (process CPU time per
// request: client, gateway and fake upstream all live in this process, so the
// gateway's own cost is the difference Gateway − Direct). tests/bench/run.sh
// measures the real binary out of process under fixed-rate load; see
// docs/BENCHMARKS.md.
package bench
