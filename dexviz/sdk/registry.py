"""Registry: validates Flows eagerly and resolves them into FlowDefinitions for the engine."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, get_type_hints

from dexviz.sdk.channel import physical_name
from dexviz.sdk.codec import CodecRegistry
from dexviz.sdk.decision import step_target_name
from dexviz.sdk.definitions import FlowDefinition, RpcDefinition, StepDefinition
from dexviz.sdk.errors import FlowDefinitionError
from dexviz.sdk.flow import RPC_MARK, Flow, PersistenceSchema, RpcOptions, has_timeout_handler
from dexviz.sdk.options import StepOptions
from dexviz.sdk.step import Step, has_wait_for

_FORBIDDEN_ID_CHARS = "/$:"


class Registry:
    """The set of Flows an engine (or a Dex worker) runs; every error names the Flow and Step."""

    def __init__(
        self,
        flows: Sequence[Flow[Any]],
        codec_registry: CodecRegistry | None = None,
        *,
        allow_async_handlers: bool = False,
    ) -> None:
        if isinstance(flows, Flow) or not isinstance(flows, Sequence):
            raise TypeError(
                "Registry takes a sequence of Flow instances, e.g. Registry([MyFlow()])"
            )
        self.flows: tuple[Flow[Any], ...] = tuple(flows)
        self.codec_registry = codec_registry if codec_registry is not None else CodecRegistry()
        self.allow_async_handlers = allow_async_handlers
        self._by_type: dict[str, FlowDefinition] = {}
        self._by_id: dict[int, FlowDefinition] = {}
        for flow in self.flows:
            definition = _FlowBuilder(flow, self).build()
            if definition.flow_type in self._by_type:
                raise FlowDefinitionError(f"duplicate Flow type {definition.flow_type!r}")
            self._by_type[definition.flow_type] = definition
            self._by_id[id(flow)] = definition

    @staticmethod
    def physical_name(name: str, instance: str | None) -> str:
        """The stored name of a map instance: ``name/<percent-encoded instance>``."""
        return physical_name(name, instance)

    @property
    def definitions(self) -> tuple[FlowDefinition, ...]:
        """The resolved Flow definitions in registration order."""
        return tuple(self._by_type.values())

    def definition(self, flow: Flow[Any] | type | str) -> FlowDefinition:
        """Return the definition of a registered Flow instance (or its class, or type name)."""
        if isinstance(flow, str):
            found = self._by_type.get(flow)
        elif isinstance(flow, type):
            # A Flow class names its one registered instance (as Step classes do, in 1.23).
            matches = [d for d in self._by_type.values() if type(d.flow) is flow]
            found = matches[0] if len(matches) == 1 else None
        else:
            found = self._by_id.get(id(flow))
            if found is None and isinstance(flow, Flow) and flow.get_flow_type() in self._by_type:
                # Registration is per instance, as in Dex's SDK (its wording, users match on it).
                raise FlowDefinitionError(
                    f"Flow instance is not registered: {flow.get_flow_type()} (another instance "
                    "of this Flow type is the registered one)"
                )
        if found is None:
            name = flow if isinstance(flow, str) else repr(flow)
            raise FlowDefinitionError(
                f"Flow {name} is not registered (registered: {', '.join(sorted(self._by_type))})"
            )
        return found

    def __repr__(self) -> str:
        return f"Registry([{', '.join(sorted(self._by_type))}])"


def _hints(function: Callable[..., Any], where: str) -> dict[str, Any]:
    try:
        return get_type_hints(function)
    except Exception as error:  # NameError and friends from unresolvable annotations
        raise FlowDefinitionError(f"{where}: cannot resolve type annotations ({error})") from error


def _input_parameter(function: Callable[..., Any], where: str) -> str | None:
    params = list(inspect.signature(function).parameters.values())[1:]  # drop self
    if not params:
        raise FlowDefinitionError(f"{where} must take (self, context, input)")
    return params[1].name if len(params) > 1 else None


class _FlowBuilder:
    """Checks one Flow and builds its FlowDefinition."""

    def __init__(self, flow: Flow[Any], registry: Registry) -> None:
        if not isinstance(flow, Flow):
            raise TypeError(f"Registry takes Flow instances, got {type(flow).__name__}")
        self.flow = flow
        self.registry = registry
        self.flow_type = _call_hook(
            f"Flow class {type(flow).__name__}", "get_flow_type", flow.get_flow_type
        )
        _check_identifier(f"Flow type {self.flow_type!r}", self.flow_type)

    def build(self) -> FlowDefinition:
        flow_where = f"Flow {self.flow_type!r}"
        step_list = _call_hook(flow_where, "get_steps", self.flow.get_steps)
        if len(step_list.start) > 1:
            names = ", ".join(s.get_step_type() for s in step_list.start)
            raise FlowDefinitionError(f"Flow {self.flow_type!r} has two start Steps: {names}")
        steps = [self._step(step) for step in step_list.all_steps]
        definition = FlowDefinition(
            flow=self.flow,
            flow_type=self.flow_type,
            start=steps[0] if step_list.start else None,
            steps={},
            channels={},
            attributes={},
            rpcs={},
            has_timeout_handler=has_timeout_handler(self.flow),
            timeout_handler_is_async=inspect.iscoroutinefunction(type(self.flow).handle_timeout),
        )
        self._index_steps(definition, steps)
        schema = _call_hook(flow_where, "get_persistence_schema", self.flow.get_persistence_schema)
        self._index_schema(definition, schema)
        self._index_rpcs(definition)
        self._check_routes(definition)
        self._check_step_locks(definition)
        return definition

    def _where(self, step_type: str, method: str | None = None) -> str:
        suffix = f".{method}" if method else ""
        return f"Flow {self.flow_type!r}, Step {step_type!r}{suffix}"

    def _step(self, step: Any) -> StepDefinition:
        if isinstance(step, type) and issubclass(step, Step):
            raise FlowDefinitionError(
                f"Flow {self.flow_type!r}: StepList takes Step instances; got the class "
                f"{step.__name__} (write {step.__name__}())"
            )
        if not isinstance(step, Step):
            raise FlowDefinitionError(
                f"Flow {self.flow_type!r}: StepList takes Step instances, got {type(step).__name__}"
            )
        step_type = _call_hook(
            f"Flow {self.flow_type!r}, Step class {type(step).__name__}",
            "get_step_type",
            step.get_step_type,
        )
        _check_identifier(f"{self._where(step_type)}: Step type", step_type)
        cls = type(step)
        input_type = self._input_type(cls.execute, step_type, "execute")
        wait_for = has_wait_for(step)
        if wait_for:
            wait_input = self._input_type(cls.wait_for, step_type, "wait_for")
            if wait_input != input_type:
                raise FlowDefinitionError(
                    f"{self._where(step_type)}: wait_for takes {_type_name(wait_input)} but "
                    f"execute takes {_type_name(input_type)}; both must take the same input type"
                )
        for name in ("wait_for", "execute"):
            if inspect.isasyncgenfunction(getattr(cls, name)):
                raise FlowDefinitionError(
                    f"{self._where(step_type, name)} is an async generator; write an async "
                    "handler that awaits context.heartbeat(...), or a sync generator"
                )
        wait_async = wait_for and inspect.iscoroutinefunction(cls.wait_for)
        exec_async = inspect.iscoroutinefunction(cls.execute)
        if (wait_async or exec_async) and not self.registry.allow_async_handlers:
            raise FlowDefinitionError(
                f"{self._where(step_type)} has an async handler; build the Registry with "
                "allow_async_handlers=True (dexviz.Engine and dexviz.simulate do)"
            )
        self._check_codec(input_type, step_type)
        options = _call_hook(self._where(step_type), "get_step_options", step.get_step_options)
        if options is not None and not isinstance(options, StepOptions):
            raise FlowDefinitionError(
                f"{self._where(step_type)}: get_step_options must return StepOptions or None, "
                f"got {type(options).__name__}"
            )
        return StepDefinition(
            step_type, step, input_type, wait_for, wait_async, exec_async, options
        )

    def _input_type(self, function: Callable[..., Any], step_type: str, method: str) -> Any:
        where = self._where(step_type, method)
        name = _input_parameter(function, where)
        if name is None:
            return type(None)
        hints = _hints(function, where)
        if name not in hints:
            raise FlowDefinitionError(f"{where}: annotate the input parameter {name!r}")
        return hints[name]

    def _check_codec(self, value_type: Any, step_type: str) -> None:
        try:
            self.registry.codec_registry.resolve(value_type)
        except TypeError as error:
            raise FlowDefinitionError(
                f"{self._where(step_type)}: no codec for input type {_type_name(value_type)} "
                f"({error})"
            ) from error

    def _index_steps(self, definition: FlowDefinition, steps: list[StepDefinition]) -> None:
        for step in steps:
            if step.step_type in definition.steps:
                raise FlowDefinitionError(
                    f"Flow {self.flow_type!r} has duplicate Step type {step.step_type!r}"
                )
            definition.steps[step.step_type] = step
            definition.by_class.setdefault(step.step_class, []).append(step)
            definition.by_instance[id(step.step)] = step

    def _index_schema(self, definition: FlowDefinition, schema: PersistenceSchema) -> None:
        if not isinstance(schema, PersistenceSchema):
            raise FlowDefinitionError(
                f"Flow {self.flow_type!r}: get_persistence_schema must return a PersistenceSchema"
            )
        seen: set[str] = set()
        for item in (*schema.attributes, *schema.channels, *schema.streams):
            if item.name in seen:
                raise FlowDefinitionError(
                    f"Flow {self.flow_type!r} declares the name {item.name!r} twice"
                )
            seen.add(item.name)
        definition.attributes = {a.name: a for a in schema.attributes}
        definition.channels = {c.name: c for c in schema.channels}
        definition.streams = {s.name: s for s in schema.streams}
        for channel in schema.channels:
            self._check_codec(channel.value_type, f"<Channel {channel.name}>")
        for attribute in schema.attributes:
            self._check_codec(attribute.value_type, f"<Attribute {attribute.name}>")

    def _index_rpcs(self, definition: FlowDefinition) -> None:
        for attr_name in sorted(dir(type(self.flow))):
            function = getattr(type(self.flow), attr_name, None)
            options = getattr(function, RPC_MARK, None)
            if not isinstance(options, RpcOptions) or function is None:
                continue
            rpc = self._rpc(function, attr_name, options)
            if rpc.name in definition.rpcs:
                raise FlowDefinitionError(f"Flow {self.flow_type!r} has duplicate RPC {rpc.name!r}")
            for lock in options.lock_attributes:
                if lock.attribute.name not in definition.attributes:
                    raise FlowDefinitionError(
                        f"Flow {self.flow_type!r}, RPC {rpc.name!r} locks the undeclared "
                        f"Attribute {lock.attribute.name!r}"
                    )
            definition.rpcs[rpc.name] = rpc
            definition.rpc_by_function[function] = rpc

    def _rpc(self, function: Callable[..., Any], attr: str, options: RpcOptions) -> RpcDefinition:
        where = f"Flow {self.flow_type!r}, RPC {options.name!r}"
        name = _input_parameter(function, where)
        is_async = inspect.iscoroutinefunction(function)
        if is_async and not self.registry.allow_async_handlers:
            raise FlowDefinitionError(f"{where} is async; use allow_async_handlers=True")
        input_type: Any = type(None)
        if name is not None:
            hints = _hints(function, where)
            if name not in hints:
                raise FlowDefinitionError(f"{where}: annotate the input parameter {name!r}")
            input_type = hints[name]
        return RpcDefinition(options.name, attr, options, name is not None, input_type, is_async)

    def _check_step_locks(self, definition: FlowDefinition) -> None:
        for step in definition.steps.values():
            options = step.options
            if options is None:
                continue
            for method, locks in (
                ("wait_for", options.wait_for_lock_attributes),
                ("execute", options.execute_lock_attributes),
            ):
                for lock in locks:
                    name = getattr(getattr(lock, "attribute", None), "name", None)
                    if name not in definition.attributes:
                        raise FlowDefinitionError(
                            f"{self._where(step.step_type, method)} locks the undeclared "
                            f"Attribute {name!r} (declare it in get_persistence_schema)"
                        )

    def _check_routes(self, definition: FlowDefinition) -> None:
        for step in definition.steps.values():
            target = step.options.execute_failure_proceed_to if step.options else None
            if target is None:
                continue
            try:
                definition.resolve_step(target)
            except FlowDefinitionError as error:
                raise FlowDefinitionError(
                    f"{self._where(step.step_type)}: on_execute_failure_proceed_to names "
                    f"{step_target_name(target)}, which is missing from the StepList ({error})"
                ) from error


def _call_hook(where: str, name: str, hook: Callable[[], Any]) -> Any:
    """Call a definition hook (get_steps, get_step_options, ...); its error names the Flow."""
    try:
        return hook()
    except Exception as error:  # noqa: BLE001 - user code: any error is a bad definition
        raise FlowDefinitionError(
            f"{where}: {name}() raised {type(error).__name__}: {error}"
        ) from error


def _check_identifier(what: str, value: str) -> None:
    if not isinstance(value, str) or not value:
        raise FlowDefinitionError(f"{what} must be a non-empty string, got {value!r}")
    bad = [c for c in _FORBIDDEN_ID_CHARS if c in value]
    if bad:
        raise FlowDefinitionError(f"{what} {value!r} must not contain {' or '.join(bad)}")


def _type_name(value_type: Any) -> str:
    return getattr(value_type, "__name__", None) or repr(value_type)
