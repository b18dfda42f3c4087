package gemini

import "encoding/json"

// Output shapes. Field order follows the order the APIs document.

type chatRequest struct {
	Model            string          `json:"model,omitempty"`
	Messages         []chatMessage   `json:"messages"`
	MaxTokens        json.RawMessage `json:"max_tokens,omitempty"`
	Temperature      json.RawMessage `json:"temperature,omitempty"`
	TopP             json.RawMessage `json:"top_p,omitempty"`
	N                json.RawMessage `json:"n,omitempty"`
	Stop             []string        `json:"stop,omitempty"`
	PresencePenalty  json.RawMessage `json:"presence_penalty,omitempty"`
	FrequencyPenalty json.RawMessage `json:"frequency_penalty,omitempty"`
	Seed             json.RawMessage `json:"seed,omitempty"`
	Stream           bool            `json:"stream,omitempty"`
	StreamOptions    *streamOptions  `json:"stream_options,omitempty"`
	Tools            []chatTool      `json:"tools,omitempty"`
	ToolChoice       any             `json:"tool_choice,omitempty"`
	ReasoningEffort  string          `json:"reasoning_effort,omitempty"`
	ResponseFormat   any             `json:"response_format,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role             string         `json:"role"`
	Content          any            `json:"content"` // string, []chatPart, or nil (null)
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type chatPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
	File     *chatFile     `json:"file,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatFile struct {
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data"`
}

type chatToolCall struct {
	ID           string        `json:"id"`
	Type         string        `json:"type"`
	Function     chatFunction  `json:"function"`
	ExtraContent *extraContent `json:"extra_content,omitempty"`
}

// extraContent is the slot Google's own OpenAI-compatible endpoint uses for a
// function call's thought signature: extra_content.google.thought_signature.
type extraContent struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature"`
	} `json:"google"`
}

func signatureExtra(sig string) *extraContent {
	if sig == "" {
		return nil
	}
	e := &extraContent{}
	e.Google.ThoughtSignature = sig
	return e
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function chatToolDef `json:"function"`
}

type chatToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatNamedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type chatCompletion struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []chatChoice    `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
}

// answerMessage is a chat.completion's message: the request's message shape
// with "refusal", a key OpenAI's reference requires (null: the upstream's
// refusal is its finish_reason, content_filter).
type answerMessage struct {
	chatMessage
	Refusal *string `json:"refusal"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      answerMessage   `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

// Gemini shapes (generativelanguage v1beta, lowerCamelCase JSON names).

type gemRequest struct {
	Contents          []gemContent  `json:"contents"`
	SystemInstruction *gemContent   `json:"systemInstruction,omitempty"`
	Tools             []gemTool     `json:"tools,omitempty"`
	ToolConfig        *gemToolCfg   `json:"toolConfig,omitempty"`
	GenerationConfig  *gemGenConfig `json:"generationConfig,omitempty"`
}

type gemContent struct {
	Role  string    `json:"role,omitempty"`
	Parts []gemPart `json:"parts"`
}

// gemPart is any Gemini part; unused fields stay empty.
type gemPart struct {
	Text             *string          `json:"text,omitempty"`
	Thought          bool             `json:"thought,omitempty"`
	InlineData       *gemBlob         `json:"inlineData,omitempty"`
	FileData         *gemFileData     `json:"fileData,omitempty"`
	FunctionCall     *gemFunctionCall `json:"functionCall,omitempty"`
	FunctionResponse *gemFunctionResp `json:"functionResponse,omitempty"`
	ThoughtSignature string           `json:"thoughtSignature,omitempty"`
}

func textPart(s string) gemPart { return gemPart{Text: &s} }

type gemBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type gemFileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type gemFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gemFunctionResp struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type gemTool struct {
	FunctionDeclarations []gemFunctionDecl `json:"functionDeclarations"`
}

type gemFunctionDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type gemToolCfg struct {
	FunctionCallingConfig gemFCConfig `json:"functionCallingConfig"`
}

type gemFCConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type gemGenConfig struct {
	StopSequences    []string        `json:"stopSequences,omitempty"`
	ResponseMimeType string          `json:"responseMimeType,omitempty"`
	ResponseSchema   json.RawMessage `json:"responseSchema,omitempty"`
	CandidateCount   json.RawMessage `json:"candidateCount,omitempty"`
	MaxOutputTokens  json.RawMessage `json:"maxOutputTokens,omitempty"`
	Temperature      json.RawMessage `json:"temperature,omitempty"`
	TopP             json.RawMessage `json:"topP,omitempty"`
	Seed             json.RawMessage `json:"seed,omitempty"`
	PresencePenalty  json.RawMessage `json:"presencePenalty,omitempty"`
	FrequencyPenalty json.RawMessage `json:"frequencyPenalty,omitempty"`
	ThinkingConfig   *gemThinking    `json:"thinkingConfig,omitempty"`
}

func (g *gemGenConfig) empty() bool {
	return g.StopSequences == nil && g.ResponseMimeType == "" && g.ResponseSchema == nil &&
		g.CandidateCount == nil && g.MaxOutputTokens == nil && g.Temperature == nil && g.TopP == nil &&
		g.Seed == nil && g.PresencePenalty == nil && g.FrequencyPenalty == nil && g.ThinkingConfig == nil
}

type gemThinking struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int64 `json:"thinkingBudget,omitempty"`
}

type gemResponse struct {
	Candidates    []gemCandidate  `json:"candidates"`
	UsageMetadata json.RawMessage `json:"usageMetadata"`
	ModelVersion  string          `json:"modelVersion,omitempty"`
	ResponseID    string          `json:"responseId,omitempty"`
}

type gemCandidate struct {
	Content      gemContent `json:"content"`
	FinishReason string     `json:"finishReason,omitempty"`
	Index        int        `json:"index"`
}
