// SPDX-License-Identifier: MIT

// kernelstat shows, as top does, what the kernels of a CUDA module do
// while they run: launches, threads, average and longest launch, counted
// by eBPF probes (kernelstat.bpf.c) that libegpu splices into the module's
// PTX. It loads the module with egpu's ModuleLoad and launches every
// kernel in it as f(float *x, int n), round after round, for -seconds or
// -launches rounds, while a goroutine prints the table every -interval.
//
//	kernelstat [-probe P.bpf.o] [-ptx K.ptx] [-seconds S] [-launches N]
//	           [-grid G] [-block B] [-n N] [-interval D] [-check] [-offline]
//
// -check exits 1 unless the probes counted exactly the launches made and
// their threads; without a GPU it instruments offline, says why it cannot
// run, and exits 77 (ctest: skipped). -offline only instruments.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"time"

	"libegpu.dev/egpu"
)

// The build's probe object and PTX, set with -ldflags "-X main.defaultProbe=...".
var defaultProbe, defaultPTX string

// errSkip ends a -check run that has nothing to check (exit 77).
var errSkip = errors.New("skipped")

// The current CUDA context belongs to an OS thread: the main goroutine,
// which launches, stays on one.
func init() { runtime.LockOSThread() }

type options struct {
	probe, ptx     string
	seconds        float64
	launches       int
	grid, block, n int
	interval       time.Duration
	check, offline bool
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.probe, "probe", defaultProbe, "probe object (`kernelstat.bpf.o`)")
	flag.StringVar(&o.ptx, "ptx", defaultPTX, "PTX whose kernels all take (float *x, int n)")
	flag.Float64Var(&o.seconds, "seconds", 10, "stop after this long (0: no limit)")
	flag.IntVar(&o.launches, "launches", 0, "stop after this many launches of each kernel (0: no limit)")
	flag.IntVar(&o.grid, "grid", 264, "blocks per launch")
	flag.IntVar(&o.block, "block", 256, "threads per block")
	flag.IntVar(&o.n, "n", 1<<22, "elements of x")
	flag.DurationVar(&o.interval, "interval", time.Second, "time between tables")
	flag.BoolVar(&o.check, "check", false, "exit 1 unless the counts match the launches made")
	flag.BoolVar(&o.offline, "offline", false, "only instrument (no GPU needed) and print the report")
	flag.Parse()
	return o
}

func (o options) validate() error {
	switch {
	case o.probe == "" || o.ptx == "":
		return errors.New("give -probe and -ptx (this build has no defaults)")
	case o.seconds <= 0 && o.launches <= 0:
		return errors.New("give -seconds or -launches a limit")
	case o.grid <= 0 || o.block <= 0 || o.n <= 0 || o.interval <= 0:
		return errors.New("-grid, -block, -n and -interval must be positive")
	}
	return nil
}

func main() {
	o := parseFlags()
	err := o.validate()
	if err == nil {
		err = run(o)
	}
	switch {
	case errors.Is(err, errSkip):
		os.Exit(77)
	case err != nil:
		fmt.Fprintln(os.Stderr, "kernelstat:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ptx, err := os.ReadFile(o.ptx)
	if err != nil {
		return err
	}
	if o.offline {
		return instrumentOnly(o, string(ptx), nil)
	}
	if err := egpu.CheckGPU(); err != nil {
		return instrumentOnly(o, string(ptx), err)
	}
	if err := openCUDA(); err != nil {
		return err
	}
	defer closeCUDA()
	ctx, err := egpu.NewContext(nil)
	if err != nil {
		return err
	}
	defer ctx.Close()
	obj, report, err := instrument(ctx, o.probe, string(ptx))
	if err != nil {
		return err
	}
	// ModuleLoad instruments the PTX again (the same way) and loads it into
	// the current context; the report above names its kernels.
	module, err := ctx.ModuleLoad(string(ptx))
	if err != nil {
		return err
	}
	stats, err := obj.Map("stats")
	if err != nil {
		return err
	}
	x, err := allocFloats(o.n)
	if err != nil {
		return err
	}
	defer x.free()
	m := &monitor{stats: stats, made: make([]atomic.Uint64, len(report.Kernels)), o: o}
	var kernels []kernel
	for _, k := range report.Kernels {
		f, err := lookupKernel(module, k.Name)
		if err != nil {
			return err
		}
		kernels = append(kernels, f)
		m.rows = append(m.rows, row{name: k.Demangled, id: k.KernelID})
	}
	return m.runAndWatch(kernels, x)
}

// instrument loads and attaches the probe and instruments the PTX,
// printing what was patched.
func instrument(ctx *egpu.Context, probe, ptx string) (*egpu.Obj, egpu.Report, error) {
	obj, err := ctx.Load(probe)
	if err != nil {
		return nil, egpu.Report{}, err
	}
	if _, err := obj.AttachAll(); err != nil {
		return nil, egpu.Report{}, err
	}
	_, r, err := ctx.Instrument(ptx)
	if err != nil {
		return nil, egpu.Report{}, err
	}
	fmt.Printf("instrumented %d of %d kernels in %.2f ms (%d programs, %d entry, %d exit points)\n",
		r.KernelsPatched, r.KernelCount, float64(r.InstrumentTime)/float64(time.Millisecond),
		r.Programs, r.EntryPoints, r.ExitPoints)
	for _, k := range r.Kernels {
		fmt.Printf("  kernel %d %-32s entry %d exit %d\n", k.KernelID, k.Demangled, k.EntryPoints, k.ExitPoints)
	}
	return obj, r, nil
}

// instrumentOnly instruments in an offline context (maps at placeholder
// addresses): for -offline, or for want of a GPU (noGPU says why).
func instrumentOnly(o options, ptx string, noGPU error) error {
	ctx, err := egpu.NewContext(&egpu.Options{Offline: true})
	if err != nil {
		return err
	}
	defer ctx.Close()
	if _, _, err := instrument(ctx, o.probe, ptx); err != nil {
		return err
	}
	if noGPU == nil {
		return nil
	}
	fmt.Printf("\nno GPU here (%v).\n"+
		"Shown: the probe loaded, verified, translated and spliced into the kernels.\n"+
		"Launching them and reading the counts needs an NVIDIA GPU.\n", noGPU)
	if o.check {
		return errSkip
	}
	return nil
}

// monitor holds the table: the main goroutine launches and counts
// launches in made; the watching goroutine reads the map. Only the
// watcher calls into egpu while kernels run, so it needs no lock.
type monitor struct {
	stats *egpu.Map
	rows  []row
	made  []atomic.Uint64
	o     options
	start time.Time
	last  time.Time
}

func (m *monitor) runAndWatch(kernels []kernel, x deviceFloats) error {
	m.start, m.last = time.Now(), time.Now()
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	done, watched := make(chan struct{}), make(chan error, 1)
	go func() { watched <- m.watch(done) }()

	err := m.launchRounds(kernels, x, interrupt)
	close(done)
	if werr := <-watched; err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if err := m.refresh(); err != nil {
		return err
	}
	m.print()
	if !m.o.check {
		return nil
	}
	if bad := checkRows(m.rows, uint64(m.o.grid)*uint64(m.o.block)); len(bad) > 0 {
		for _, b := range bad {
			fmt.Println("CHECK FAILED:", b)
		}
		return errors.New("the counts do not match the launches")
	}
	fmt.Printf("check passed: every launch of the %d kernels counted, with all %d threads in and out\n",
		len(m.rows), m.o.grid*m.o.block)
	return nil
}

// launchRounds launches every kernel once a round, waiting for each round
// to finish, until a limit is reached or the user interrupts.
func (m *monitor) launchRounds(kernels []kernel, x deviceFloats, interrupt <-chan os.Signal) error {
	deadline := m.start.Add(time.Duration(m.o.seconds * float64(time.Second)))
	for round := 0; m.o.launches <= 0 || round < m.o.launches; round++ {
		if m.o.seconds > 0 && time.Now().After(deadline) {
			return nil
		}
		select {
		case <-interrupt:
			return nil
		default:
		}
		for i, k := range kernels {
			if err := k.launch(m.o.grid, m.o.block, x); err != nil {
				return err
			}
			m.made[i].Add(1)
		}
		if err := synchronize(); err != nil {
			return err
		}
	}
	return nil
}

// watch prints the table every interval until done is closed.
func (m *monitor) watch(done <-chan struct{}) error {
	tick := time.NewTicker(m.o.interval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-tick.C:
			if err := m.refresh(); err != nil {
				return err
			}
			m.print()
		}
	}
}

// refresh reads every kernel's counts, and its launch rate since the last read.
func (m *monitor) refresh() error {
	now := time.Now()
	dt := now.Sub(m.last).Seconds()
	for i := range m.rows {
		s, err := readStats(m.stats, m.rows[i].id)
		if err != nil {
			return err
		}
		r := &m.rows[i]
		if dt > 0 {
			r.rate = float64(s.launches-r.stats.launches) / dt
		}
		r.stats, r.made = s, m.made[i].Load()
	}
	m.last = now
	return nil
}

// print shows the table, on a terminal in place of the previous one.
func (m *monitor) print() {
	if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Print(clearScreen)
	} else {
		fmt.Println()
	}
	printTable(os.Stdout, header(time.Since(m.start), m.o.grid, m.o.block, m.o.n), m.rows)
}
