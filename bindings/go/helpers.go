// SPDX-License-Identifier: MIT

package egpu

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"libegpu.dev/egpu/internal/capi"
)

// The helper numbers left to applications (RegisterHelper).
const (
	HelperUserMin = uint32(capi.EGPU_HELPER_USER_MIN)
	HelperUserMax = uint32(capi.EGPU_HELPER_USER_MAX)
)

// Argument kinds of a parsed signature (enum egpu_helper_arg).
var (
	argU64      = int(capi.EGPU_HELPER_ARG_U64)
	argBuf      = int(capi.EGPU_HELPER_ARG_BUF)
	argConstBuf = int(capi.EGPU_HELPER_ARG_CONST_BUF)
)

// helperSig is a signature string as the library parses it.
type helperSig struct {
	retVoid bool
	kind    []int
	size    []int
}

func parseHelperSig(sig string) (helperSig, error) {
	var w [6]uint64
	if _, err := call(func() int { return capi.Helper_sig(sig, &w[0]) }); err != nil {
		return helperSig{}, err
	}
	s := helperSig{retVoid: w[0]>>8 != 0}
	for i := 1; i <= int(w[0]&0xff); i++ {
		s.kind = append(s.kind, int(w[i]>>32))
		s.size = append(s.size, int(uint32(w[i])))
	}
	return s, nil
}

var byteType = reflect.TypeOf(byte(0))

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Uintptr:
		return true
	}
	return false
}

// signatureOf derives a signature from a func type: integers are u64,
// [N]byte const u8[N], *[N]byte u8[N]; no result is void, an integer u64.
func signatureOf(t reflect.Type) (string, error) {
	args := make([]string, t.NumIn())
	for i := range args {
		in := t.In(i)
		switch {
		case isInteger(in):
			args[i] = "u64"
		case in.Kind() == reflect.Array && in.Elem() == byteType:
			args[i] = fmt.Sprintf("const u8[%d]", in.Len())
		case in.Kind() == reflect.Pointer && in.Elem().Kind() == reflect.Array &&
			in.Elem().Elem() == byteType:
			args[i] = fmt.Sprintf("u8[%d]", in.Elem().Len())
		default:
			return "", newError(EINVAL, fmt.Sprintf("egpu: helper argument %d is "+
				"a %v: use integers, [N]byte, *[N]byte, or []byte with "+
				"an explicit signature", i+1, in))
		}
	}
	ret := "void"
	if t.NumOut() == 1 && isInteger(t.Out(0)) {
		ret = "u64"
	} else if t.NumOut() != 0 {
		return "", newError(EINVAL, fmt.Sprintf("egpu: a helper returns "+
			"nothing or one integer, not %v", t))
	}
	return ret + " (" + strings.Join(args, ", ") + ")", nil
}

// argFits says whether parameter type @in can take argument @i of @s.
func argFits(in reflect.Type, s helperSig, i int) bool {
	switch s.kind[i] {
	case argU64:
		return isInteger(in)
	case argConstBuf:
		return in.Kind() == reflect.Slice && in.Elem() == byteType ||
			in.Kind() == reflect.Array && in.Elem() == byteType && in.Len() == s.size[i]
	default:
		return in.Kind() == reflect.Slice && in.Elem() == byteType ||
			in.Kind() == reflect.Pointer && in.Elem().Kind() == reflect.Array &&
				in.Elem().Elem() == byteType && in.Elem().Len() == s.size[i]
	}
}

func kindName(s helperSig, i int) string {
	switch s.kind[i] {
	case argU64:
		return "u64"
	case argBuf:
		return fmt.Sprintf("u8[%d]", s.size[i])
	}
	return fmt.Sprintf("const u8[%d]", s.size[i])
}

func checkFunc(t reflect.Type, s helperSig) error {
	if t.NumIn() != len(s.kind) {
		return newError(EINVAL, fmt.Sprintf("egpu: a %v cannot take %d arguments",
			t, len(s.kind)))
	}
	for i := range s.kind {
		if !argFits(t.In(i), s, i) {
			return newError(EINVAL, fmt.Sprintf("egpu: argument %d of %v "+
				"cannot take the signature's %s", i+1, t, kindName(s, i)))
		}
	}
	if s.retVoid && t.NumOut() == 0 || !s.retVoid && t.NumOut() == 1 && isInteger(t.Out(0)) {
		return nil
	}
	return newError(EINVAL, fmt.Sprintf("egpu: the results of %v do not match "+
		"a helper returning %s", t, map[bool]string{true: "void", false: "u64"}[s.retVoid]))
}

// cBytes is the @n bytes of buffer argument @words[@i], in C memory and
// valid during the call only (@words is C memory too: the word is read as
// the pointer it holds).
func cBytes(words []uint64, i, n int) []byte {
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&words[i]))), n)
}

// goArg is argument @i of a call, as parameter type @in: an integer, or a
// Go copy of a buffer (written back after the call when writable).
func goArg(in reflect.Type, s helperSig, words []uint64, i int) reflect.Value {
	if s.kind[i] == argU64 {
		return reflect.ValueOf(words[i]).Convert(in)
	}
	src := reflect.ValueOf(cBytes(words, i, s.size[i]))
	var v reflect.Value
	switch in.Kind() {
	case reflect.Slice:
		v = reflect.MakeSlice(in, s.size[i], s.size[i])
		reflect.Copy(v, src)
	case reflect.Array:
		v = reflect.New(in).Elem()
		reflect.Copy(v, src)
	default: // *[N]byte
		v = reflect.New(in.Elem())
		reflect.Copy(v.Elem(), src)
	}
	return v
}

// argBytes is the bytes buffer argument @v holds after the call.
func argBytes(v reflect.Value) []byte {
	if v.Kind() == reflect.Pointer {
		v = v.Elem().Slice(0, v.Elem().Len())
	}
	return v.Bytes()
}

// helperBody calls @fn with a call's words converted as @s says.
func helperBody(fn reflect.Value, s helperSig) capi.HelperFunc {
	t := fn.Type()
	return func(words []uint64) uint64 {
		args := make([]reflect.Value, len(words))
		for i := range words {
			args[i] = goArg(t.In(i), s, words, i)
		}
		out := fn.Call(args)
		for i := range words {
			if s.kind[i] == argBuf {
				copy(cBytes(words, i, s.size[i]), argBytes(args[i]))
			}
		}
		if len(out) == 0 {
			return 0
		}
		if out[0].CanUint() {
			return out[0].Uint()
		}
		return uint64(out[0].Int())
	}
}

// RegisterHelper makes Go func @fn helper number @id (HelperUserMin to
// HelperUserMax) of the context, called @name in messages; objects loaded
// from then on may call it (docs/helpers.md). @sig ("void (u64, const
// u8[16])") may be "": then it comes from @fn's type, integers being u64,
// [N]byte const u8[N] and *[N]byte u8[N] (a copy the probe sees again),
// no result void. With an explicit @sig, []byte takes a buffer of either
// kind. Programs run on the CPU call @fn synchronously; GPU calls are
// made later on the context's dispatcher thread (or in HelperPoll). @fn
// must not call into its Context (the Context's lock is held around runs
// and Close).
func (c *Context) RegisterHelper(id uint32, name string, fn any, sig string) error {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return newError(EINVAL, fmt.Sprintf("egpu: helper %q is a %T, not a func", name, fn))
	}
	var err error
	if sig == "" {
		if sig, err = signatureOf(v.Type()); err != nil {
			return err
		}
	}
	s, err := parseHelperSig(sig)
	if err == nil {
		err = checkFunc(v.Type(), s)
	}
	if err != nil {
		return err
	}
	defer c.lock()()
	if err := c.live(); err != nil {
		return err
	}
	h := capi.NewHelper(helperBody(v, s))
	if _, err := call(func() int { return capi.Helper_register(c.h, uint(id), name, sig, uint(h)) }); err != nil {
		capi.ReleaseHelper(h)
		return err
	}
	c.fin.helpers = append(c.fin.helpers, h)
	return nil
}

// HelperDispatch chooses who makes the calls GPU threads queue: a thread
// of the context (true, the default) or the application, in HelperPoll.
func (c *Context) HelperDispatch(thread bool) error {
	defer c.lock()()
	if err := c.live(); err != nil {
		return err
	}
	how := capi.EGPU_DISPATCH_POLL
	if thread {
		how = capi.EGPU_DISPATCH_THREAD
	}
	_, err := call(func() int { return capi.Egpu_helper_set_dispatch(c.h, capi.Enum_SS_egpu_helper_dispatch(how)) })
	return err
}

// HelperPoll makes the calls GPU threads queued, first waiting up to
// @timeoutMs (as egpu_helper_poll) when there are none; the calls made.
// It holds the Context's lock while it waits.
func (c *Context) HelperPoll(timeoutMs int) (int, error) {
	defer c.lock()()
	if err := c.live(); err != nil {
		return 0, err
	}
	return call(func() int { return capi.Egpu_helper_poll(c.h, timeoutMs) })
}

// HelperDrops is the number of GPU calls dropped because the call ring
// was full.
func (c *Context) HelperDrops() uint64 {
	defer c.lock()()
	if c.h == nil {
		return 0
	}
	return capi.Egpu_helper_drops(c.h)
}
