package providers

import "context"

type localAddrKey struct{}

// WithLocalAddr asks the transport to leave from local IP ip (a connection's
// configured providerSpecificData.localAddress). "" means the default route.
func WithLocalAddr(ctx context.Context, ip string) context.Context {
	if ip == "" {
		return ctx
	}
	return context.WithValue(ctx, localAddrKey{}, ip)
}

// LocalAddrFrom returns the local IP a request asked to leave from, or "".
func LocalAddrFrom(ctx context.Context) string {
	ip, _ := ctx.Value(localAddrKey{}).(string)
	return ip
}
