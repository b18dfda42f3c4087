// Package gemini translates between OpenAI Chat Completions (the gateway's
// hub format) and Google's Gemini API (generativelanguage v1beta:
// models/{model}:generateContent, :streamGenerateContent, :countTokens), in
// both directions, for requests, whole responses and streams; it also reads
// and writes Google's error bodies.
//
// Bodies are raw JSON bytes in and out, validated with jsonv before anything
// is read. Input that is not what the wire format allows is an *InputError
// (the caller answers 400, or 502 when the input was an upstream answer); an
// error inside a stream is an *UpstreamStreamError, never a normal end. Every
// Gemini field is read under its lowerCamelCase JSON name and its snake_case
// proto name, as Google's parser accepts both; output uses lowerCamelCase.
//
// # Requests
//
//	Gemini                                   Chat
//	URL model, :streamGenerateContent        model, stream (+ stream_options.include_usage)
//	systemInstruction.parts[].text           one leading system message (texts joined by a blank
//	                                         line) ⇄ every system/developer message, one part each
//	contents[].role user / model             user / assistant ("function"/"tool" read as user); an
//	                                         empty Chat message is left out (a part must hold data:
//	                                         Google reads {"text":""} as none), and a conversation
//	                                         left with no content is a 400
//	(consecutive same-role messages)         one Content (Gemini turns alternate)
//	text part                                text (a string when it is the only part)
//	thought: true text part                  reasoning_content (Chat → Gemini: dropped, unsigned
//	                                         reasoning cannot be replayed)
//	inlineData {mimeType, data}              image_url data: URL (image/*), file part (other types);
//	                                         text/* inline data is a 400
//	fileData {mimeType, fileUri}             image_url with the URL (http(s) images); other stored
//	                                         files are a 400 ⇄ an http(s) image_url becomes fileData
//	                                         with the type guessed from the extension
//	functionCall {id, name, args}            tool_calls[] {id, function {name, arguments}}; args that
//	                                         are not an object travel as {"_arguments": "<raw>"} in
//	                                         history; in an answer the call is dropped and the
//	                                         finishReason is MAX_TOKENS (cut off) or
//	                                         MALFORMED_FUNCTION_CALL
//	thoughtSignature on a text part          dropped: Chat has no slot (Gemini validates only the
//	                                         signatures of function calls)
//	functionCall thoughtSignature            tool_calls[].extra_content.google.thought_signature (the
//	                                         slot Google's OpenAI-compatible endpoint uses); the first
//	                                         call of a turn without one gets Google's documented
//	                                         "skip_thought_signature_validator" (Gemini 3 rejects
//	                                         function calls in history without a signature)
//	functionResponse {id, name, response}    a tool message with the call's id; response {"output": s}
//	                                         ⇄ s, {"error": s} → "Error: s", other objects ⇄ their JSON
//	                                         text; a tool message whose text is a JSON object is the
//	                                         response itself. Consecutive tool and user messages share
//	                                         one user Content.
//	tools[].functionDeclarations             function tools: parametersJsonSchema passes as it is;
//	                                         parameters (OpenAPI subset, types often upper case) →
//	                                         JSON Schema (types lower-cased, nullable → ["T","null"]).
//	                                         Chat → Gemini: the schema is cut to Gemini's subset (see
//	                                         below) and sent as parameters
//	googleSearch, codeExecution, urlContext  dropped: hosted by Google (Chat → Gemini: custom and
//	                                         hosted Chat tools dropped)
//	toolConfig.functionCallingConfig.mode    AUTO/VALIDATED → auto, NONE ⇄ none, ANY ⇄ required,
//	  + allowedFunctionNames                 ANY with one name ⇄ a named function; allowed_tools →
//	                                         mode with its names
//	generationConfig.temperature, topP       temperature, top_p
//	maxOutputTokens                          max_tokens (max_completion_tokens read first)
//	stopSequences                            stop (at most 5 go to Gemini; more are dropped)
//	candidateCount (> 1)                     n
//	presencePenalty, frequencyPenalty, seed  presence_penalty, frequency_penalty, seed
//	topK                                     dropped: no Chat counterpart
//	responseMimeType "application/json"      response_format json_object
//	responseSchema / responseJsonSchema      response_format json_schema (name "output"); Chat →
//	                                         Gemini: responseMimeType + responseSchema (cut schema)
//	thinkingConfig.thinkingBudget            reasoning_effort: 0 → none, < 4096 low, < 16384 medium,
//	                                         else high; -1 (dynamic) → none given. Back: none 0,
//	                                         minimal 512, low 1024, medium 8192, high/xhigh/max 24576,
//	                                         with includeThoughts when the budget is not 0, so each
//	                                         effort but minimal survives a round trip
//	thinkingConfig.thinkingLevel             reasoning_effort as it is (minimal, low, medium, high)
//	safetySettings, cachedContent, labels    dropped
//	user, parallel_tool_calls, logprobs,     dropped: no Gemini counterpart
//	  metadata, store, service_tier
//
// Function call ids: Gemini's functionCall.id is optional. A call without one
// gets a stable id "gcall_<content>_<part>" (the same conversation gets the
// same ids every turn), and a functionResponse without an id answers the
// first unanswered call of the last model turn with its name, else the first
// unanswered one. Ids starting "gcall_" are this package's own and are never
// sent to Gemini; every other id is sent on functionCall and functionResponse.
//
// Schemas to Gemini: Gemini's Schema is an OpenAPI 3.0 subset. Type arrays
// ["T","null"] become type T with nullable, const a one-value enum, oneOf
// anyOf (an anyOf alternative {"type":"null"} becomes nullable; a single
// alternative left is merged in); enums that are not all strings, formats
// other than enum/date-time (string), int32/int64, float/double, required
// names with no property, empty properties and every other keyword ($schema,
// additionalProperties, $ref, $defs, allOf, not, patternProperties,
// exclusiveMinimum, examples, …) are dropped. An object schema left with no
// properties is sent as no parameters (Gemini rejects an empty properties).
//
// # Responses
//
// candidates[0] (the one with index 0) is the answer: text parts → content,
// thought parts → reasoning_content, functionCall parts → tool_calls (ids and
// signatures as above; a call without an id gets a fresh "gcall_" id).
// Chat → Gemini: reasoning_content → a thought part first, content → a text
// part, tool calls → functionCall parts with the call's id (one made up when
// it has none), an answer with no parts → one empty text part.
//
//	finishReason                             finish_reason
//	STOP                                     stop, or tool_calls when the answer holds function calls
//	MAX_TOKENS                               length
//	SAFETY, RECITATION, PROHIBITED_CONTENT,  content_filter
//	  BLOCKLIST, SPII, IMAGE_*, LANGUAGE
//	MALFORMED_FUNCTION_CALL,                 stop (tool_calls when calls were parsed)
//	  UNEXPECTED_TOOL_CALL, OTHER
//	promptFeedback.blockReason, no candidate content_filter, empty content
//	Chat → Gemini                            stop/tool_calls → STOP, length → MAX_TOKENS,
//	                                         content_filter → SAFETY; an answer with a
//	                                         refusal (message.refusal, delta.refusal) → SAFETY
//
// Usage: Gemini's promptTokenCount includes the cached tokens
// (cachedContentTokenCount), and candidatesTokenCount excludes the thinking
// tokens (thoughtsTokenCount). So prompt_tokens = promptTokenCount (+
// toolUsePromptTokenCount), cached_tokens = cachedContentTokenCount,
// completion_tokens = candidatesTokenCount + thoughtsTokenCount and
// reasoning_tokens = thoughtsTokenCount; back, candidatesTokenCount =
// completion_tokens − reasoning_tokens and totalTokenCount the sum.
// translate.Usage: InputTokens the prompt, OutputTokens the completion with
// its reasoning, CacheReadTokens the cached part, ReasoningTokens the thoughts.
//
// # Streams
//
// Gemini → Chat (NewStreamToChat) reads the ?alt=sse events (a JSON-array
// element sent as one event is read too): a role chunk, then content /
// reasoning_content deltas and one tool_calls delta per functionCall part
// (Gemini streams a call whole), one finish chunk at the finishReason (or the
// prompt block), the running usageMetadata kept, and at End a usage chunk with
// "choices": [] and "data: [DONE]". Gemini has no end event: a stream that
// stops before a finishReason is not Complete. An {"error": …} chunk is an
// *UpstreamStreamError with Google's status as its code.
//
// Chat → Gemini (NewStreamFromChat) writes ?alt=sse events or the JSON-array
// framing ("[{…}", ",\r\n{…}", "]"): one chunk per text or reasoning delta,
// and a last chunk holding the gathered function calls (or an empty text
// part), the finishReason and usageMetadata, written at [DONE] or End since
// OpenAI reports usage after the finish_reason. Keep-alive comments are not
// forwarded: Gemini clients' SSE readers take only data events. An error
// after bytes were sent ends the stream with Google's error object in the
// stream's framing (ErrorWriter; translate.ErrorEvent for the SSE framing).
//
// # Errors and countTokens
//
// ParseError reads Google's error body {"error":{code, message, status,
// details}}: the RetryInfo retryDelay ("37s", "0.5s"), the QuotaFailure
// violations' quotaId and ErrorInfo's quota_limit, and whether the quota is
// per day ("…PerDay…": exhausted until it resets) or per minute ("…PerMinute…":
// a short wait). AppendError writes that shape for a Gemini-native client,
// with a RetryInfo detail when a retry delay is known. CountTokens estimates
// the prompt of a countTokens body locally; CountRequestFromGenerate and
// ParseCountTokens ask a Gemini upstream instead.
package gemini
