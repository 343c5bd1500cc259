package hold

import (
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Process names the process that wrote a hold: its host, its process id,
// and the host's boot, so that gc on the same host can tell a publish
// that was killed (SIGKILL, a crash, a lost container) from one still
// running, without waiting out the heartbeat.
type Process struct {
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	Boot string `json:"boot,omitempty"`
}

// self is this process, read once.
var self = sync.OnceValue(func() Process {
	host, _ := os.Hostname()
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return Process{Host: host, PID: os.Getpid(), Boot: strings.TrimSpace(string(boot))}
})

// Gone reports whether the process that wrote the hold has certainly
// ended: it ran on this host, and the host has booted since, or no
// process has its id. A hold from another host, or of a process that may
// still run (one of its id exists, or signalling it is not allowed), is
// not known gone: only its heartbeat tells.
func (p Process) Gone() bool {
	me := self()
	if p.Host == "" || p.PID <= 0 || p.Host != me.Host {
		return false
	}
	if p.Boot != "" && me.Boot != "" && p.Boot != me.Boot {
		return true
	}
	if p.PID == me.PID {
		return false
	}
	proc, err := os.FindProcess(p.PID)
	if err != nil {
		return false
	}
	err = proc.Signal(syscall.Signal(0))
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
}
