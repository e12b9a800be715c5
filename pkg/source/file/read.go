package file

import "github.com/podwatch/podwatch/pkg/manifestfs"

// reader reads through the source's openFile, which tests replace.
func (s *Source) reader() manifestfs.Reader { return manifestfs.Reader{Open: s.openFile} }

func (s *Source) readManifest(path string) ([]byte, error) { return s.reader().Manifest(path) }

func (s *Source) readDirNames() ([]string, error) { return s.reader().DirNames(s.path) }
