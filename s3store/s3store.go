package s3store

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/utils"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/lakeswap/lakeswap/parquetio"
)

// DefaultPartSize is the multipart part size: the memory one upload holds.
const DefaultPartSize = 16 << 20

// MinPartSize is the smallest part S3 accepts, but for the last one.
const MinPartSize = 5 << 20

// maxAttempts bounds the SDK's retries of a transient error.
const maxAttempts = 5

// Catalog properties that configure S3, named as iceberg-go and PyIceberg
// name them. Credentials are not among them: they come from the AWS chain.
const (
	PropEndpoint      = "s3.endpoint"
	PropRegion        = "s3.region"
	PropPathStyle     = "s3.path-style-access"
	PropForceVirtual  = "s3.force-virtual-addressing"
	PropPartSize      = "lakeswap.s3.part-size"
	PropMaxBackoff    = "lakeswap.s3.max-backoff" // the longest wait between retries, e.g. 2s
	PropPartsInFlight = "lakeswap.s3.parts-in-flight"

	// DefaultPartsInFlight: one part is sent while the next is encoded.
	DefaultPartsInFlight = 1
	defaultRegionValue   = "us-east-1"
)

// What FitUploads may give one upload, where the memory allows: parts in
// flight first, then bigger parts. Measured (make bench, BenchmarkStageS3,
// 10M rows in files of about 6.6 MB, 5 MiB parts, MinIO on loopback):
// staging to S3 went from 0.64x of staging locally with one part in
// flight to 0.90x with four.
const (
	maxPartsInFlight = 4
	maxPartSize      = 64 << 20
)

// FitUploads sizes each upload's parts, and how many are sent at once, to
// the memory one upload may hold (budget), where the catalog's properties
// leave them to lakeswap: up to maxPartsInFlight parts in flight, then
// parts up to maxPartSize once that many of the bigger size fit. It
// returns props with both set; never fewer than one part in flight of the
// default size.
func FitUploads(props map[string]string, budget int64) map[string]string {
	_, sizeSet := props[PropPartSize]
	_, flightSet := props[PropPartsInFlight]
	if sizeSet && flightSet || budget <= 0 {
		return props
	}
	c := ConfigFromProps(props)
	part, inFlight := c.PartSize, c.PartsInFlight
	if !sizeSet {
		// Bigger parts only once as many as will be in flight fit.
		most := int64(maxPartsInFlight)
		if flightSet {
			most = int64(inFlight)
		}
		for part*2 <= maxPartSize && part*2*(most+1) <= budget {
			part *= 2
		}
	}
	if !flightSet {
		// An upload holds its parts in flight and the one being filled.
		inFlight = int(min(max(budget/part-1, 1), maxPartsInFlight))
	}
	out := maps.Clone(props)
	if out == nil {
		out = map[string]string{}
	}
	out[PropPartSize], out[PropPartsInFlight] = strconv.FormatInt(part, 10), strconv.Itoa(inFlight)
	return out
}

// Config says where the store is and how to talk to it.
type Config struct {
	Endpoint  string // empty: AWS
	Region    string
	PathStyle bool // bucket in the path, as MinIO wants
	PartSize  int64
	// MaxBackoff caps the wait between retries of a request; 0 keeps the
	// SDK's 20 s.
	MaxBackoff time.Duration
	// PartsInFlight is how many parts of one upload are sent at once while
	// the next is filled: an upload holds PartsInFlight+1 parts in memory.
	PartsInFlight int
}

// ConfigFromProps reads the S3 settings of a catalog's properties. Path-style
// addressing is on when an endpoint is set, as iceberg-go does, unless the
// properties say otherwise.
func ConfigFromProps(props map[string]string) Config {
	c := Config{Endpoint: props[PropEndpoint], Region: props[PropRegion], PartSize: DefaultPartSize, PartsInFlight: DefaultPartsInFlight}
	c.PathStyle = c.Endpoint != ""
	if v, err := strconv.ParseBool(props[PropPathStyle]); err == nil {
		c.PathStyle = v
	}
	if v, err := strconv.ParseBool(props[PropForceVirtual]); err == nil && v {
		c.PathStyle = false
	}
	if v, err := strconv.ParseInt(props[PropPartSize], 10, 64); err == nil && v > 0 {
		c.PartSize = v
	}
	if v, err := strconv.Atoi(props[PropPartsInFlight]); err == nil && v > 0 {
		c.PartsInFlight = v
	}
	if v, err := time.ParseDuration(props[PropMaxBackoff]); err == nil && v > 0 {
		c.MaxBackoff = v
	}
	return c
}

type sdkLogKey struct{}

// WithSDKLog makes the AWS configurations LoadAWS builds from ctx log the
// SDK's own lines to log, at debug level; without it they go nowhere.
func WithSDKLog(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, sdkLogKey{}, log)
}

// LoadAWS builds the AWS configuration from the standard chain
// (environment, shared config and credentials files, profiles, instance
// roles) with the bounded standard retryer, and an HTTP client whose GET
// bodies survive a broken connection (Resuming).
//
// A process loads each configuration once: a command reaches S3 for its
// catalog and again for its inputs, and loading reads the shared files and
// parses the CA bundle AWS_CA_BUNDLE names (15% of the CPU of the frozen
// guard's cells on PostgreSQL and MinIO, where CLI commands run in one
// process). A configuration is loaded again when the environment's AWS_
// variables differ.
func LoadAWS(ctx context.Context, c Config) (aws.Config, error) {
	key := loadKey{region: c.Region, maxBackoff: c.MaxBackoff, env: awsEnv()}
	loaded.Lock()
	defer loaded.Unlock()
	if cfg, ok := loaded.cfgs[key]; ok {
		return cfg, nil
	}
	cfg, err := loadAWS(ctx, c)
	if err != nil {
		return aws.Config{}, err
	}
	if loaded.cfgs == nil {
		loaded.cfgs = map[loadKey]aws.Config{}
	}
	loaded.cfgs[key] = cfg
	return cfg, nil
}

// loaded is every AWS configuration the process loaded, by what it was
// loaded from.
var loaded struct {
	sync.Mutex
	cfgs map[loadKey]aws.Config
}

type loadKey struct {
	region     string
	maxBackoff time.Duration
	env        string // the AWS_ variables of the environment, sorted
}

func awsEnv() string {
	var vars []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") {
			vars = append(vars, kv)
		}
	}
	slices.Sort(vars)
	return strings.Join(vars, "\x00")
}

func loadAWS(ctx context.Context, c Config) (aws.Config, error) {
	// The SDK's own log lines (an instance-metadata fallback, a response
	// without a checksum) are noise to a person at a terminal; what matters
	// is said once below. They go to the log WithSDKLog put in the
	// context of the request, at debug level.
	opts := []func(*config.LoadOptions) error{config.WithRetryer(Retryer(c.MaxBackoff)), config.WithLogger(sdkLogger{})}
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegionValue
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = awshttp.NewBuildableClient()
	}
	cfg.HTTPClient = Resuming(cfg.HTTPClient)
	// Found now, once, and said in one line when missing, rather than by
	// the first request in the SDK's words.
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return aws.Config{}, ErrNoCredentials
	}
	return cfg, nil
}

// sdkLogger logs the SDK's lines to the log of the request's context
// (WithSDKLog), and nowhere when it has none: a configuration is shared
// by the commands of a process, and one command's log is not another's.
type sdkLogger struct{ log *slog.Logger }

func sdkLogOf(ctx context.Context) *slog.Logger {
	l, _ := ctx.Value(sdkLogKey{}).(*slog.Logger)
	return l
}

func (s sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	if s.log != nil {
		s.log.Debug(fmt.Sprintf(format, v...), "from", "aws-sdk", "class", string(c))
	}
}

func (s sdkLogger) WithContext(ctx context.Context) logging.Logger {
	return sdkLogger{sdkLogOf(ctx)}
}

// ErrNoCredentials: the AWS chain found no credentials for S3.
var ErrNoCredentials = errors.New("no AWS credentials for S3: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or run where the machine provides a role); lakeswap takes them only from the environment or the AWS chain")

// Retryer is the SDK's standard retryer bounded at five attempts: it backs
// off and retries 5xx answers, throttling and connection resets, and never a
// refused precondition. maxBackoff 0 keeps the SDK's default (20 s).
func Retryer(maxBackoff time.Duration) func() aws.Retryer {
	return func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = maxAttempts
			if maxBackoff > 0 {
				o.MaxBackoff = maxBackoff
			}
		})
	}
}

// Store writes objects.
type Store struct {
	client        *s3.Client
	partSize      int64
	partsInFlight int
}

// New returns a store on the given AWS configuration.
func New(awsCfg aws.Config, c Config) *Store {
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = c.PathStyle
	})
	part := c.PartSize
	if part <= 0 {
		part = DefaultPartSize
	}
	return &Store{client: client, partSize: max(part, MinPartSize), partsInFlight: max(c.PartsInFlight, 1)}
}

// Client is the underlying S3 client, for tests and benchmarks.
func (s *Store) Client() *s3.Client { return s.client }

// Create begins the upload of bucket/key. Nothing is sent until the first
// part fills: an object smaller than a part goes up in one conditional PUT
// when it is closed, a larger one as a multipart upload. Nothing is visible
// at the key until Close.
func (s *Store) Create(ctx context.Context, bucket, key string) (*Upload, error) {
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	return &Upload{ctx: ctx, store: s, bucket: bucket, key: key, token: hex.EncodeToString(token),
		inflight: make(chan struct{}, s.partsInFlight)}, nil
}

// start starts the multipart upload, once a first part is full.
func (u *Upload) start() error {
	out, err := u.store.client.CreateMultipartUpload(u.ctx, &s3.CreateMultipartUploadInput{
		Bucket: aws.String(u.bucket), Key: aws.String(u.key), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c,
		Metadata: map[string]string{uploadTokenKey: u.token},
	})
	if err != nil {
		// A start cut short (Ctrl-C, a lost answer) may have started an
		// upload all the same; the key is this attempt's alone.
		u.strays = true
		return u.fail(fmt.Errorf("start upload of s3://%s/%s: %w", u.bucket, u.key, err))
	}
	u.id = aws.ToString(out.UploadId)
	// A retried start may have started an upload whose answer was lost.
	if attempts, ok := retry.GetAttemptResults(out.ResultMetadata); ok && len(attempts.Results) > 1 {
		u.strays = true
	}
	return nil
}

// Delete removes bucket/key.
func (s *Store) Delete(ctx context.Context, bucket, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return fmt.Errorf("delete s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}

// Upload is one object being written. It is not safe for concurrent use.
type Upload struct {
	ctx         context.Context
	store       *Store
	bucket, key string
	id          string // the multipart upload's, once started
	token       string // in the object's metadata: which upload made it
	put         bool   // a single PUT was sent: the object may be at the key
	strays      bool   // its start was retried: other uploads may be at the key
	buf         []byte
	sent        int64
	done        bool
	err         error

	// Parts upload in the background while the next is filled, at most
	// cap(inflight) at once: the upload holds that many parts and the one
	// being filled.
	inflight chan struct{}
	free     [][]byte // part buffers back from their upload
	wg       sync.WaitGroup
	mu       sync.Mutex // guards what part uploads report:
	parts    []types.CompletedPart
	sums     []uint32 // the parts' CRC32C, for the composite
	failed   error    // the first part that could not be uploaded
}

var _ io.WriteCloser = (*Upload)(nil)
var _ io.ReaderFrom = (*Upload)(nil)

// Write buffers p and uploads every full part. The buffer grows with what
// is written, up to a part: a small file never holds a part's memory.
func (u *Upload) Write(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	n := len(p)
	for len(p) > 0 {
		take := min(int(u.store.partSize)-len(u.buf), len(p))
		u.buf = append(u.buf, p[:take]...)
		p = p[take:]
		if len(u.buf) == int(u.store.partSize) {
			if u.id == "" {
				if err := u.start(); err != nil {
					return n - len(p), err
				}
			}
			if err := u.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// ReadFrom copies r into the upload.
func (u *Upload) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{u}, r)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// flush starts the upload of the buffered part and gives Write a buffer to
// fill meanwhile; it waits while the upload has as many parts in flight as
// it may.
func (u *Upload) flush() error {
	if err := u.ctx.Err(); err != nil {
		return u.fail(fmt.Errorf("upload of s3://%s/%s: %w", u.bucket, u.key, err))
	}
	if err := u.partFailed(); err != nil {
		return u.fail(err)
	}
	body := u.buf
	sum := crc32.Checksum(body, castagnoli)
	u.mu.Lock()
	u.parts, u.sums = append(u.parts, types.CompletedPart{}), append(u.sums, sum)
	num := int32(len(u.parts))
	u.mu.Unlock()
	u.sent += int64(len(body))
	u.inflight <- struct{}{}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		crc := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, sum))
		out, err := u.store.client.UploadPart(u.ctx, &s3.UploadPartInput{
			Bucket: aws.String(u.bucket), Key: aws.String(u.key), UploadId: aws.String(u.id),
			PartNumber: aws.Int32(num), Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c, ChecksumCRC32C: aws.String(crc),
		})
		u.mu.Lock()
		if err != nil && u.failed == nil {
			u.failed = fmt.Errorf("upload part %d of s3://%s/%s: %w", num, u.bucket, u.key, err)
		}
		if err == nil {
			u.parts[num-1] = types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num), ChecksumCRC32C: aws.String(crc)}
		}
		u.free = append(u.free, body[:0])
		u.mu.Unlock()
		<-u.inflight
	}()
	u.mu.Lock()
	if n := len(u.free); n > 0 {
		u.buf, u.free = u.free[n-1], u.free[:n-1]
	} else {
		u.buf = make([]byte, 0, u.store.partSize)
	}
	u.mu.Unlock()
	return nil
}

// partFailed is the first part upload's failure, if one failed.
func (u *Upload) partFailed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.failed
}

// fail aborts the upload and remembers why.
func (u *Upload) fail(err error) error {
	u.err = err
	_ = u.Abort()
	return err
}

// Abort gives up the upload and removes its parts. It is safe to call after
// a failure or twice; the object was never made visible.
func (u *Upload) Abort() error {
	if u.done {
		return nil
	}
	u.done = true
	u.wg.Wait() // no part lands after the abort
	// The upload's own context may be the reason to abort: use a fresh one.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), 30*time.Second)
	defer cancel()
	if u.put {
		// A PUT cut short may have landed all the same: its object is
		// removed, and only its own (its token, size and checksum), never
		// an object another upload made. (A PUT refused because another
		// object is at the key clears put.)
		mine, err := u.completedHere()
		if err != nil {
			return fmt.Errorf("check s3://%s/%s after a failed upload: %w", u.bucket, u.key, err)
		}
		if !mine {
			return nil
		}
		if _, err := u.store.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(u.bucket), Key: aws.String(u.key)}); err != nil {
			return fmt.Errorf("remove s3://%s/%s after a failed upload: %w", u.bucket, u.key, err)
		}
		return nil
	}
	var err error
	if u.id != "" {
		_, err = u.store.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(u.bucket), Key: aws.String(u.key), UploadId: aws.String(u.id),
		})
	}
	u.abortStrays()
	if err != nil {
		return fmt.Errorf("abort upload of s3://%s/%s: %w", u.bucket, u.key, err)
	}
	return nil
}

// abortStrays aborts the other incomplete uploads at the upload's key: a
// CreateMultipartUpload whose answer was lost and that the SDK retried
// started one nobody knows the id of. Staging keys are this attempt's
// alone, so any other upload there is this one's stray.
func (u *Upload) abortStrays() {
	if !u.strays {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), 30*time.Second)
	defer cancel()
	out, err := u.store.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(u.bucket), Prefix: aws.String(u.key)})
	if err != nil {
		return // what is left, gc lists by run id
	}
	for _, up := range out.Uploads {
		if aws.ToString(up.Key) == u.key && aws.ToString(up.UploadId) != u.id {
			_, _ = u.store.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(u.bucket), Key: up.Key, UploadId: up.UploadId,
			})
		}
	}
}

// Close uploads the last part, completes the upload only if the key is still
// free, and checks that the store holds as many bytes as were sent, with the
// checksum of the parts sent.
func (u *Upload) Close() error {
	if u.err != nil {
		return u.err
	}
	if u.done {
		return errors.New("upload already closed")
	}
	if u.id == "" {
		return u.putOnce()
	}
	if len(u.buf) > 0 || len(u.parts) == 0 {
		if err := u.flush(); err != nil {
			return err
		}
	}
	u.wg.Wait()
	if err := u.partFailed(); err != nil {
		return u.fail(err)
	}
	_, err := u.store.client.CompleteMultipartUpload(u.ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String(u.bucket), Key: aws.String(u.key), UploadId: aws.String(u.id),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: u.parts},
		IfNoneMatch:     aws.String("*"),
	})
	if err != nil {
		// The SDK retries a completion whose answer was lost; the retry
		// then finds the object the first attempt made. It is this
		// upload's if it holds the bytes and parts sent.
		if mine, herr := u.completedHere(); herr == nil && mine {
			err = nil
		}
	}
	if err != nil {
		if isPreconditionFailed(err) {
			return u.fail(fmt.Errorf("refusing to overwrite s3://%s/%s: the store reports an object at the key (If-None-Match precondition failed): %w",
				u.bucket, u.key, parquetio.ErrExists))
		}
		return u.fail(fmt.Errorf("complete upload of s3://%s/%s: %w", u.bucket, u.key, err))
	}
	u.done = true
	u.abortStrays()
	head, err := u.store.client.HeadObject(u.ctx, &s3.HeadObjectInput{
		Bucket: aws.String(u.bucket), Key: aws.String(u.key), ChecksumMode: types.ChecksumModeEnabled,
	})
	if err != nil {
		return fmt.Errorf("check s3://%s/%s after upload: %w", u.bucket, u.key, err)
	}
	if got := aws.ToInt64(head.ContentLength); got != u.sent {
		return fmt.Errorf("store holds %d bytes of s3://%s/%s instead of the %d bytes sent", got, u.bucket, u.key, u.sent)
	}
	if got := aws.ToString(head.ChecksumCRC32C); got != "" {
		want := u.composite()
		if base, _, _ := strings.Cut(got, "-"); base != want {
			return fmt.Errorf("store reports CRC32C %s for s3://%s/%s, the parts sent give %s", got, u.bucket, u.key, want)
		}
	}
	return nil
}

// putOnce sends an object smaller than a part in one PUT: one request
// instead of a multipart upload's four, with the same guarantees. The
// store checks the body's CRC32C and refuses the PUT if an object is at
// the key (If-None-Match); a retry whose first attempt landed finds the
// upload's own object, known by its token, size and checksum.
func (u *Upload) putOnce() error {
	if err := u.ctx.Err(); err != nil {
		return u.fail(fmt.Errorf("upload of s3://%s/%s: %w", u.bucket, u.key, err))
	}
	sum := crc32.Checksum(u.buf, castagnoli)
	u.sums, u.sent = []uint32{sum}, int64(len(u.buf))
	crc := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, sum))
	u.put = true
	out, err := u.store.client.PutObject(u.ctx, &s3.PutObjectInput{
		Bucket: aws.String(u.bucket), Key: aws.String(u.key), Body: bytes.NewReader(u.buf), ContentLength: aws.Int64(u.sent),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c, ChecksumCRC32C: aws.String(crc),
		IfNoneMatch: aws.String("*"), Metadata: map[string]string{uploadTokenKey: u.token},
	})
	if err != nil && isPreconditionFailed(err) {
		mine, herr := u.completedHere()
		if herr == nil && mine {
			err = nil
		} else {
			u.put = false // the object at the key is not known to be this upload's: leave it
			if herr == nil {
				return u.fail(fmt.Errorf("refusing to overwrite s3://%s/%s: the store reports an object at the key (If-None-Match precondition failed): %w",
					u.bucket, u.key, parquetio.ErrExists))
			}
		}
	}
	if err != nil {
		return u.fail(fmt.Errorf("upload s3://%s/%s: %w", u.bucket, u.key, err))
	}
	if out != nil {
		if got := aws.ToString(out.ChecksumCRC32C); got != "" && got != crc {
			return u.fail(fmt.Errorf("store reports CRC32C %s for s3://%s/%s, the bytes sent give %s", got, u.bucket, u.key, crc))
		}
	}
	u.done, u.buf = true, nil
	return nil
}

// uploadTokenKey is the user metadata that names the upload an object
// came from: an object of the same bytes written by another upload is not
// this one's.
const uploadTokenKey = "lakeswap-upload"

// completedHere reports whether the object at the key is the one this
// upload completed: it carries the upload's token, its size is the bytes
// sent and its ETag the multipart ETag of the parts sent (the MD5 of their
// MD5s), with their composite CRC32C where the store reports one.
func (u *Upload) completedHere() (bool, error) {
	// Even a cancelled upload must learn whether its object landed.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), time.Minute)
	defer cancel()
	var head *s3.HeadObjectOutput
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Second)
		}
		head, err = u.store.client.HeadObject(ctx, &s3.HeadObjectInput{
			Bucket: aws.String(u.bucket), Key: aws.String(u.key), ChecksumMode: types.ChecksumModeEnabled,
		})
		var missing *types.NotFound
		if err == nil || errors.As(err, &missing) {
			break
		}
	}
	if err != nil {
		return false, err
	}
	if head.Metadata[uploadTokenKey] != u.token || aws.ToInt64(head.ContentLength) != u.sent {
		return false, nil
	}
	if got := aws.ToString(head.ChecksumCRC32C); got != "" {
		if base, _, _ := strings.Cut(got, "-"); base != u.composite() {
			return false, nil
		}
	}
	if u.id == "" {
		return true, nil // a single PUT: its token, size and checksum are the upload's
	}
	want, ok := u.multipartETag()
	return ok && strings.Trim(aws.ToString(head.ETag), `"`) == want, nil
}

// multipartETag is the ETag S3 gives an object completed from the parts
// sent: the hex MD5 of their binary MD5s, a dash, and their count.
func (u *Upload) multipartETag() (string, bool) {
	h := md5.New()
	for _, p := range u.parts {
		sum, err := hex.DecodeString(strings.Trim(aws.ToString(p.ETag), `"`))
		if err != nil || len(sum) != md5.Size {
			return "", false
		}
		h.Write(sum)
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), len(u.parts)), true
}

// composite is the checksum S3 reports of the object: a single PUT's
// CRC32C, or of a multipart upload the CRC32C of the parts' CRC32Cs.
func (u *Upload) composite() string {
	var sum uint32
	if u.id == "" && len(u.sums) == 1 {
		sum = u.sums[0]
	} else {
		var crcs []byte
		for _, s := range u.sums {
			crcs = binary.BigEndian.AppendUint32(crcs, s)
		}
		sum = crc32.Checksum(crcs, castagnoli)
	}
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, sum))
}

func isPreconditionFailed(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "PreconditionFailed", "ConditionalRequestConflict":
			return true
		}
	}
	var re interface{ HTTPStatusCode() int }
	return errors.As(err, &re) && re.HTTPStatusCode() == 412
}

// Attach configures S3 for a catalog's properties: the AWS configuration
// from the standard chain goes into the returned context, where iceberg-go's
// S3 file IO takes it from, so that lakeswap and the table agree on where
// objects are and who is asking; the Store is for staged writes.
func Attach(ctx context.Context, props map[string]string) (context.Context, *Store, error) {
	c := ConfigFromProps(props)
	awsCfg, err := LoadAWS(ctx, c)
	if err != nil {
		return ctx, nil, err
	}
	return utils.WithAwsConfig(ctx, &awsCfg), New(awsCfg, c), nil
}

// UsesS3 reports whether a catalog's properties put tables on S3.
func UsesS3(props map[string]string) bool {
	w := props["warehouse"]
	return props[PropEndpoint] != "" || strings.HasPrefix(w, "s3://") || strings.HasPrefix(w, "s3a://")
}
