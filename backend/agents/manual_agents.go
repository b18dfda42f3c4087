package agents

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
	id:   "cursor",
	name: "Cursor",
	kind: KindManual,
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
