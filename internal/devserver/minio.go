package devserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"crypto/rand"
	"encoding/hex"
	"net"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// MinIOVersion is the MinIO server built from the Go module proxy when no
// minio binary is found.
const MinIOVersion = "v0.0.0-20260212201848-7aac2a2c5b7c"

// Environment that points the tests at an S3 endpoint of one's own; its
// credentials are the standard AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
const (
	EnvS3Endpoint = "LAKESWAP_TEST_S3_ENDPOINT"
	EnvMinIOBin   = "LAKESWAP_MINIO"
)

// S3 is a running S3-compatible server.
type S3 struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string
	Client    *minio.Client
	stop      func()
}

// StartMinIODetached starts a MinIO server that outlives this process, for
// `make dev-up`; it returns the server's pid. log receives its output.
func StartMinIODetached(ctx context.Context, dataDir string, log *os.File) (*S3, int, error) {
	s, pid, err := startMinIO(ctx, dataDir, log, true)
	return s, pid, err
}

// Stop stops the server if this process started it.
func (s *S3) Stop() {
	if s.stop != nil {
		s.stop()
	}
}

// StartS3 gives an S3 server: the endpoint in LAKESWAP_TEST_S3_ENDPOINT
// (with the AWS credentials in the environment), or a MinIO started now in
// a fresh folder, which Stop stops and removes.
func StartS3(ctx context.Context, log *os.File) (*S3, error) {
	if ep := os.Getenv(EnvS3Endpoint); ep != "" {
		s := &S3{Endpoint: ep, AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"), Region: "us-east-1"}
		if r := os.Getenv("AWS_REGION"); r != "" {
			s.Region = r
		}
		return s, s.connect()
	}
	dir, err := os.MkdirTemp("", "lakeswap-minio-")
	if err != nil {
		return nil, err
	}
	s, _, err := startMinIO(ctx, dir, log, false)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	stop := s.stop
	var once sync.Once
	s.stop = func() { once.Do(func() { stop(); _ = os.RemoveAll(dir) }) }
	return s, nil
}

func startMinIO(ctx context.Context, dataDir string, log *os.File, detach bool) (*S3, int, error) {
	bin, err := MinIOBinary(ctx, log)
	if err != nil {
		return nil, 0, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, 0, err
	}
	console, err := FreePort()
	if err != nil {
		return nil, 0, err
	}
	s := &S3{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), AccessKey: "lakeswap-" + Random(6), SecretKey: Random(20), Region: "us-east-1"}
	cmd := exec.Command(bin, "server", "--quiet", "--address", fmt.Sprintf("127.0.0.1:%d", port),
		"--console-address", fmt.Sprintf("127.0.0.1:%d", console), dataDir)
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+s.AccessKey, "MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	cmd.Stdout, cmd.Stderr = log, log
	// A test's server dies with the process that started it, however that
	// ends; a developer's lives in its own session until `make dev-down`.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
	if err := waitHealthy(ctx, s.Endpoint+"/minio/health/live", exited); err != nil {
		s.stop()
		return nil, 0, fmt.Errorf("minio at %s: %w", s.Endpoint, err)
	}
	return s, cmd.Process.Pid, s.connect()
}

// waitHealthy polls a health endpoint until it answers 200, the server
// exits, or a minute passes.
func waitHealthy(ctx context.Context, url string, exited <-chan error) error {
	deadline := time.Now().Add(time.Minute)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("server exited before it was ready: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("not ready after a minute")
}

func (s *S3) connect() error {
	host := strings.TrimPrefix(strings.TrimPrefix(s.Endpoint, "http://"), "https://")
	c, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Secure: strings.HasPrefix(s.Endpoint, "https://"),
		Region: s.Region,
	})
	if err != nil {
		return err
	}
	s.Client = c
	return nil
}

// Env is the environment a lakeswap process needs to reach the server: the
// standard AWS variables, which lakeswap reads through the AWS chain.
func (s *S3) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey, "AWS_REGION=" + s.Region}
}

// MinIOBinary finds the minio server: $LAKESWAP_MINIO, then minio on the
// PATH, then the cache folder, building it there with `go install` when
// absent (about four minutes the first time). A file lock keeps test
// binaries that run at once from building it twice.
func MinIOBinary(ctx context.Context, log *os.File) (string, error) {
	if p := os.Getenv(EnvMinIOBin); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "minio-"+MinIOVersion)
	bin := filepath.Join(dir, "minio")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		// Another process builds it: say so, then wait for it.
		fmt.Fprintf(log, "lakeswap: waiting for another process building minio %s (lock %s)\n", MinIOVersion, lock.Name())
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			return "", err
		}
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // another process built it while this one waited
	}
	fmt.Fprintf(log, "lakeswap: building minio %s into %s (a few minutes, once)\n", MinIOVersion, dir)
	args := []string{"install", "github.com/minio/minio@" + MinIOVersion}
	if log == os.Stderr {
		// A person waits on it: each package is a line of progress.
		args = []string{"install", "-v", "github.com/minio/minio@" + MinIOVersion}
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = os.TempDir() // outside any module, so the version is the one named
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install minio@%s: %w", MinIOVersion, err)
	}
	return bin, nil
}

// FreePort returns a loopback port nobody listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Random returns n random bytes as hex, for credentials and names.
func Random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func cacheDir() (string, error) {
	if d := os.Getenv("LAKESWAP_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s/lakeswap", d), nil
}
