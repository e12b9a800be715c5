package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
)

// maxJSONBytes bounds a state file. The pod state of a node is kilobytes to
// a few megabytes; anything far bigger is not a file SaveJSON wrote.
const maxJSONBytes = 64 << 20

// SaveJSON writes v as JSON to dir/name, creating dir if needed. It replaces
// the file atomically (a temp file in dir, fdatasync, rename, fsync of dir):
// after a crash the file holds either the old value or the new one. The file
// is readable by root only, as the pod state can include secrets.
//
// name is a plain file name; it must not start with a dot (temp files do)
// nor collide with the event log or lock file.
func SaveJSON(dir, name string, v any) error {
	if err := checkName(name); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", name, err)
	}
	data = append(data, '\n')
	if len(data) > maxJSONBytes {
		return fmt.Errorf("store: encode %s: %d bytes, over the %d limit", name, len(data), maxJSONBytes)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	// A unique temp name lets concurrent saves each commit a whole file.
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("store: save %s in %s: %w", name, dir, err)
	}
	_, err = tmp.Write(data)
	renamed := false
	if err == nil {
		renamed, err = commitFile(tmp, filepath.Join(dir, name))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if !renamed {
		_ = os.Remove(tmp.Name())
	}
	if err != nil {
		return fmt.Errorf("store: save %s in %s: %w", name, dir, err)
	}
	return nil
}

// LoadJSON decodes dir/name into v, which must be a non-nil pointer. v is
// replaced, not merged into, and only on success.
//
// A missing file returns an error matching fs.ErrNotExist. A file that is
// not valid JSON for v (truncated, garbage, wrong shape) is set aside as
// <name>.corrupt-<unix seconds> and a *CorruptError (matching ErrCorrupt)
// is returned: the caller starts from scratch, and the next SaveJSON writes
// a fresh file.
func LoadJSON(dir, name string, v any) error {
	if err := checkName(name); err != nil {
		return err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("store: load %s: need a non-nil pointer, got %T", name, v)
	}
	path := filepath.Join(dir, name)
	f, err := openRegular(path)
	if err != nil {
		return fmt.Errorf("store: load %s: %w", name, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxJSONBytes+1))
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("store: load %s: %w", name, err)
	}
	fresh := reflect.New(rv.Elem().Type())
	var why string
	switch {
	case len(data) > maxJSONBytes:
		why = fmt.Sprintf("larger than %d bytes", maxJSONBytes)
	case len(data) == 0:
		why = "empty"
	default:
		if err := json.Unmarshal(data, fresh.Interface()); err != nil {
			why = describeJSONError(err)
		}
	}
	if why != "" {
		cerr := &CorruptError{Path: path, Offset: -1, Reason: why}
		aside, err := setAside(path, time.Now())
		cerr.SetAside = aside
		if aside == "" {
			return errors.Join(cerr, fmt.Errorf("store: %w", err))
		}
		return cerr
	}
	rv.Elem().Set(fresh.Elem())
	return nil
}

// ReadJSON decodes dir/name into v as LoadJSON does, but leaves a file it
// cannot decode where it is: for a file that may be valid to another
// reader (a newer podwatch's), which must not be set aside. A missing file
// returns an error matching fs.ErrNotExist; any other error names the file.
func ReadJSON(dir, name string, v any) error {
	if err := checkName(name); err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	f, err := openRegular(path)
	if err != nil {
		return fmt.Errorf("store: read %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxJSONBytes+1))
	_ = f.Close()
	switch {
	case err != nil:
		return fmt.Errorf("store: read %s: %w", path, err)
	case len(data) > maxJSONBytes:
		return fmt.Errorf("store: read %s: larger than %d bytes", path, maxJSONBytes)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("store: read %s: %s", path, describeJSONError(err))
	}
	return nil
}

// describeJSONError says what was wrong without quoting the file's content,
// which may hold secrets from pod specs.
func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("JSON %s where %s was expected at byte %d", typ.Value, typ.Type, typ.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "JSON cut short"
	}
	return "JSON does not decode"
}

// checkName keeps state files inside dir and clear of the store's own files.
func checkName(name string) error {
	switch {
	case name == "", name != filepath.Base(name), strings.HasPrefix(name, "."),
		name == lockName, name == logName, strings.HasPrefix(name, logName+"."):
		return fmt.Errorf("store: invalid state file name %q", name)
	}
	return nil
}
