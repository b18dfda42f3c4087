package agents_test

import (
	"fmt"
	"os"

	"omniroute/backend/agents"
)

func ExampleManager_Setup() {
	home, err := os.MkdirTemp("", "agents-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)

	m := agents.New(agents.Options{
		Home:    home,
		BaseURL: "http://127.0.0.1:20128",
		APIKey:  "sk-omni-example",
		Model:   "openai/gpt-4o-mini",
	})
	res, err := m.Setup("codex")
	if err != nil {
		panic(err)
	}
	data, err := os.ReadFile(res.Path)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(data))
	fmt.Println(res.Created, res.Instructions.Env)
	// Output:
	// model_provider = "omniroute"
	// model = "openai/gpt-4o-mini"
	//
	// [model_providers.omniroute]
	// name = "OmniRoute"
	// base_url = "http://127.0.0.1:20128/v1"
	// wire_api = "responses"
	// experimental_bearer_token = "sk-omni-example"
	// true map[]
}

func ExampleManager_RunEnv() {
	m := agents.New(agents.Options{BaseURL: "http://127.0.0.1:20128", APIKey: "sk-omni-example"})
	cmd, env, err := m.RunEnv("claude-code")
	fmt.Println(cmd, env, err)
	// Output:
	// claude [ANTHROPIC_AUTH_TOKEN=sk-omni-example ANTHROPIC_BASE_URL=http://127.0.0.1:20128] <nil>
}
