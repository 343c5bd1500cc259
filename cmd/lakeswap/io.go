package main

// iceberg-go's file IOs register themselves by scheme; the binary is the one
// place that chooses which it carries. Local files are built in.
import _ "github.com/apache/iceberg-go/io/gocloud/s3" // s3://, s3a://, s3n://
