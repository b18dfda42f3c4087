package agents

import (
	"net"
	"net/url"
	"strings"
)

// Cline keeps its provider settings in the editor's extension state, so
// there is no file to write; the user enters these in Cline's settings.
var clineSpec = spec{
	id:   "cline",
	name: "Cline",
	kind: KindManual,
	instructions: func(o *Options, _ string) Instructions {
		return Instructions{
			Env: map[string]string{},
			Steps: []string{
				"Open Cline in your editor and click the settings (gear) icon.",
				"API Provider: OpenAI Compatible",
				"Base URL: " + o.v1(),
				"API Key: " + o.APIKey,
				"Model ID: " + o.model(),
				"Save (Done), then start a new task.",
			},
		}
	},
}

// Cursor takes a custom OpenAI key and base URL in its Models settings.
// Cursor sends these requests from its own servers, so a loopback address
// only works once the gateway is reachable from the internet.
var cursorSpec = spec{
	id:          "cursor",
	name:        "Cursor",
	kind:        KindManual,
	unreachable: cursorUnreachable,
	instructions: func(o *Options, _ string) Instructions {
		return Instructions{
			Env: map[string]string{},
			Steps: []string{
				"Open Cursor Settings → Models.",
				"OpenAI API Key: " + o.APIKey,
				"Turn on \"Override OpenAI Base URL\" and enter: " + o.v1(),
				"Add a custom model named " + o.model() + ", enable it, and click Verify.",
				"Note: Cursor sends custom-key requests from Cursor's servers, not from this computer, so " + o.BaseURL +
					" is only reachable if the gateway is exposed at a public URL (for example through a tunnel); use that URL instead of the local one.",
			},
		}
	},
}

// cursorUnreachable: Cursor calls a custom base URL from Cursor's servers, so
// a gateway whose address only this computer or its network can reach
// (loopback, private or link-local, a bare host name) cannot be set up for it.
func cursorUnreachable(o *Options) string {
	if publicURL(o.BaseURL) {
		return ""
	}
	return "Cursor sends custom-key requests from Cursor's servers, which cannot reach " + o.BaseURL +
		": expose the gateway at a public URL (for example through a tunnel) to use it from Cursor."
}

// publicURL reports whether raw names a host the internet can reach: a
// public IP address or a dotted domain name that is not "localhost".
func publicURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil {
		return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified())
	}
	return strings.Contains(host, ".") && host != "localhost" && !strings.HasSuffix(host, ".localhost") && !strings.HasSuffix(host, ".local")
}
